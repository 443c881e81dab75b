pub mod buffer;
pub mod cpu;
pub mod memory;
pub mod mutex;
pub mod pmutex;
pub mod settings;
pub mod threads;
