//! plumb: benchmarks that say what really happened underneath each number.

mod exit;
mod facts;
mod native;
mod progress;
mod signals;
mod sysbench;

fn main() {
    // A file size limit (ulimit -f) should fail a write with EFBIG, reported like a full
    // disk, rather than kill the process with SIGXFSZ.
    // SAFETY: setting a signal disposition to SIG_IGN has no preconditions.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    let args: Vec<String> = std::env::args().skip(1).collect();
    if invoked_as() == "sysbench" {
        std::process::exit(sysbench::dropin::main(&args));
    }
    let code = match dispatch(&args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("plumb: {e:#}");
            exit::code_for(&e)
        }
    };
    std::process::exit(code);
}

/// The file name the binary was run under: a symlink named after a peer tool selects that
/// tool's behaviour (see DESIGN.md, drop-in names).
fn invoked_as() -> String {
    std::env::args_os()
        .next()
        .map(std::path::PathBuf::from)
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default()
}

fn dispatch(args: &[String]) -> anyhow::Result<i32> {
    match args.first().map(String::as_str) {
        None => {
            eprint!("{}", sysbench::general_help());
            Ok(exit::USAGE)
        }
        Some("help") => {
            print!("{}\n{}", sysbench::general_help(), native::HELP);
            Ok(0)
        }
        Some("inspect") => native::inspect::main(&args[1..]),
        Some("iostat") => native::iostat::main(&args[1..]),
        Some("version") => {
            println!("plumb {}", env!("CARGO_PKG_VERSION"));
            Ok(0)
        }
        _ => sysbench::main(args),
    }
}
