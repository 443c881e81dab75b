//! plumb: benchmarks that say what really happened underneath each number.

mod dd;
mod exit;
mod fio;
mod keep;
mod mysqlslap;
mod native;
mod plumb_flags;
mod progress;
mod signals;
mod sweep;
mod sysbench;

fn main() {
    // A file size limit (ulimit -f) should fail a write with EFBIG, reported like a full
    // disk, rather than kill the process with SIGXFSZ.
    // SAFETY: setting a signal disposition to SIG_IGN has no preconditions.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    // A reader that goes away (`plumb cpu help | head -1`) ends plumb quietly, as it ends
    // sysbench, fio and dd, instead of a panic in print!: Rust starts with SIGPIPE ignored.
    // Sockets are written with MSG_NOSIGNAL (std's and plumb's own), so a database server
    // that goes away is still an error to report, not a signal.
    // SAFETY: restoring a signal's default disposition has no preconditions.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    let args: Vec<String> = match std::env::args_os()
        .skip(1)
        .map(|a| a.into_string())
        .collect::<Result<_, _>>()
    {
        Ok(args) => args,
        Err(a) => {
            eprintln!("plumb: argument {a:?} is not valid UTF-8");
            std::process::exit(exit::USAGE);
        }
    };
    match invoked_as().as_str() {
        "sysbench" => std::process::exit(sysbench::dropin::main(&args)),
        "fio" => std::process::exit(fio::run::main(&args, fio::run::Mode::DropIn)),
        "mysqlslap" => std::process::exit(mysqlslap::main(&args, mysqlslap::Mode::DropIn)),
        "dd" => std::process::exit(dd::main(&args, dd::Mode::DropIn)),
        _ => {}
    }
    let code = match dispatch(&args) {
        Ok(code) => code,
        Err(e) => {
            // Whatever a parser echoed, no secret value the user typed goes out.
            let msg = plumb_core::redact::text(&exit::message(&e), &args);
            eprintln!("plumb: {msg}");
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
        Some("fio") => Ok(fio::run::main(&args[1..], fio::run::Mode::Plumb)),
        Some("mysqlslap") => Ok(mysqlslap::main(&args[1..], mysqlslap::Mode::Plumb)),
        Some("dd") => Ok(dd::main(&args[1..], dd::Mode::Plumb)),
        Some(word) if native::is_command(word) => native::main(args),
        // Alone, the help flags show the whole help; with a test (plumb --help cpu) they are
        // sysbench's.
        Some("--help" | "-h") if args.len() == 1 => native::main(&["help".to_string()]),
        _ => sysbench::main(args),
    }
}
