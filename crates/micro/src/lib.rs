pub mod buffer;
pub mod cpu;
pub mod memory;
pub mod mutex;
pub mod threads;
