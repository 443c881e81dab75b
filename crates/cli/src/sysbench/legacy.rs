//! sysbench 0.4/0.5 OLTP command lines (reference: oltp-behaviour.md, section 3): the test
//! they name (0.5's `tests/db/oltp.lua`, 0.4's built-in `oltp`) and the options that choose
//! or shape it. Each legacy option either maps to what sysbench 1.0 does for it or is
//! refused with one line saying why; none is accepted and ignored.

use super::testdefs::{self, oltp, TestDef};

/// Where a command line's test name comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A sysbench 1.0 test or script name.
    Current,
    /// sysbench 0.5's `oltp.lua` (a path ending in `/oltp.lua`).
    Script05,
    /// sysbench 0.4's built-in `--test=oltp`.
    Test04,
}

impl Origin {
    /// `dropin`: sysbench 1.0.20 has no built-in `oltp` (it says it cannot find the
    /// benchmark), and the drop-in says the same.
    pub fn of(name: &str, dropin: bool) -> Origin {
        let stem = std::path::Path::new(name)
            .file_stem()
            .and_then(|s| s.to_str());
        if name.ends_with(".lua") && stem == Some("oltp") {
            Origin::Script05
        } else if name == "oltp" && !dropin {
            Origin::Test04
        } else {
            Origin::Current
        }
    }
}

/// 0.4/0.5 options with no equivalent in sysbench 1.0 or plumb.
const WITHOUT_EQUIVALENT: &[(&str, &str)] = &[
    (
        "oltp-table-name",
        "plumb's tables are sbtest1..N, as sysbench 1.0's",
    ),
    (
        "oltp-connect-delay",
        "plumb connects each thread once, before the run",
    ),
    (
        "oltp-user-delay-min",
        "plumb runs events back to back (--rate paces them)",
    ),
    (
        "oltp-user-delay-max",
        "plumb runs events back to back (--rate paces them)",
    ),
    (
        "oltp-point-select-mysql-handler",
        "plumb's point select is sysbench 1.0's SELECT",
    ),
    (
        "oltp-point-select-all-cols",
        "plumb's point select is sysbench 1.0's SELECT c",
    ),
    (
        "oltp-reconnect-mode",
        "plumb reconnects only after a lost connection",
    ),
    (
        "oltp-sp-name",
        "plumb runs sysbench's statements, not a stored procedure",
    ),
    (
        "myisam-max-rows",
        "the legacy script writes MAX_ROWS = 1000000 whatever it says (sysbench 1.0's compatibility layer sets it over the option), and so does plumb",
    ),
];

fn flag(name: &str, v: Option<&str>) -> Result<bool, String> {
    match v.map(str::to_ascii_lowercase).as_deref() {
        None | Some("on" | "true" | "yes" | "1") => Ok(true),
        Some("off" | "false" | "no" | "0") => Ok(false),
        Some(_) => Err(format!(
            "invalid value for --{name}: '{}' (allowed: on or off)",
            v.unwrap_or("")
        )),
    }
}

/// The options of a 0.4/0.5 command line that choose the test or have no 1.0 name, taken
/// out of `raw` (and `typed`, kept in step); the test they choose is returned. The rest
/// keep their names for [`testdefs::script_option_names`].
///
/// Under the drop-in name only a 0.5 script takes them: sysbench 1.0's own scripts refuse
/// them as invalid options, and the drop-in leaves that to its option check. Under plumb's
/// name any OLTP test takes them, as long as they choose that same test.
pub fn apply(
    test: &'static TestDef,
    origin: Origin,
    raw: &mut Vec<(String, Option<String>)>,
    typed: &mut Vec<String>,
    dropin: bool,
) -> Result<&'static TestDef, String> {
    if !oltp::ALL.iter().any(|t| std::ptr::eq(*t, test)) || (dropin && origin == Origin::Current) {
        return Ok(test);
    }
    let (mut read_only, mut write_only) = (None, None);
    let (mut test_mode, mut nontrx_mode) = (None::<String>, None::<String>);
    let (mut rand_init, mut engine_trx) = (None, None::<(String, String)>);
    let mut kept = Vec::with_capacity(raw.len());
    for ((name, value), t) in raw.drain(..).zip(typed.drain(..)) {
        let key = name.replace('_', "-");
        let v = value.as_deref();
        match key.as_str() {
            "oltp-read-only" => read_only = Some(flag(&key, v)?),
            "oltp-write-only" => write_only = Some(flag(&key, v)?),
            "oltp-test-mode" => test_mode = Some(v.unwrap_or("").to_string()),
            "oltp-nontrx-mode" => nontrx_mode = Some(v.unwrap_or("").to_string()),
            "rand-init" => rand_init = Some(flag(&key, v)?),
            "mysql-engine-trx" => engine_trx = Some((v.unwrap_or("").to_string(), t)),
            // 0.4's distribution options are 1.0's --rand-type and --rand-spec-*, with the
            // same words.
            "oltp-dist-type" => kept.push((("rand-type".to_string(), value), t)),
            "oltp-dist-iter" => kept.push((("rand-spec-iter".to_string(), value), t)),
            "oltp-dist-pct" => kept.push((("rand-spec-pct".to_string(), value), t)),
            "oltp-dist-res" => kept.push((("rand-spec-res".to_string(), value), t)),
            _ => {
                if let Some((_, why)) = WITHOUT_EQUIVALENT.iter().find(|(n, _)| *n == key) {
                    return Err(format!(
                        "--{key} is a sysbench 0.4/0.5 option plumb does not support: {why}"
                    ));
                }
                kept.push(((name, value), t));
            }
        }
    }
    let given = |n: &str| {
        kept.iter()
            .find(|((k, _), _)| k == n)
            .map(|((_, v), _)| v.clone())
    };
    let seed_given = given("rand-seed")
        .flatten()
        .is_some_and(|s| s.trim() != "0" && !s.trim().is_empty());
    match rand_init {
        // 0.5 seeded from the time only when asked; 1.0 and plumb always do, unless a seed
        // is given, which 0.5 refused alongside --rand-init.
        Some(true) if seed_given => {
            return Err("--rand-init=on seeds from the time and --rand-seed gives a seed: give one of them (sysbench 0.5 refuses both)".into())
        }
        Some(false) if !seed_given => {
            return Err("--rand-init=off (sysbench 0.5: the same random numbers on every run) is not supported: plumb seeds from the time; --rand-seed=N repeats a run's numbers".into())
        }
        _ => {}
    }
    if let Some((value, t)) = engine_trx {
        match value.as_str() {
            // The tables are transactional (or taken as such): BEGIN/COMMIT, which plumb runs.
            "yes" | "auto" => {
                let driver = given("db-driver").flatten();
                let other = match &driver {
                    Some(d) => (d != "mysql").then(|| d.clone()),
                    None => kept.iter().find_map(|((k, _), _)| {
                        ["pgsql", "sqlite"]
                            .into_iter()
                            .find(|d| k.starts_with(&format!("{d}-")))
                            .map(String::from)
                    }),
                };
                if let Some(d) = other {
                    return Err(format!(
                        "--mysql-engine-trx is an option of the mysql driver, but this run uses the {d} driver"
                    ));
                }
                // A MySQL option chooses the MySQL driver, as every --mysql-* does.
                if driver.is_none() {
                    kept.push((("db-driver".into(), Some("mysql".into())), t));
                }
            }
            "no" => return Err("--mysql-engine-trx=no (an engine without transactions: sysbench 0.4 locks the tables instead of BEGIN/COMMIT) is not supported: plumb runs transactions; --skip-trx=on runs every statement on its own".into()),
            v => return Err(format!("invalid value for --mysql-engine-trx: '{v}' (allowed: yes, no, auto)")),
        }
    }
    let chosen = chosen_test(
        read_only.unwrap_or(false),
        write_only.unwrap_or(false),
        test_mode.as_deref(),
        nontrx_mode.as_deref(),
    )?;
    let (r, t): (Vec<_>, Vec<_>) = kept.into_iter().unzip();
    *raw = r;
    *typed = t;
    if origin != Origin::Current {
        return Ok(chosen);
    }
    let choosing = [
        ("oltp-read-only", read_only.is_some()),
        ("oltp-write-only", write_only.is_some()),
        ("oltp-test-mode", test_mode.is_some()),
    ];
    match choosing.iter().find(|(_, g)| *g) {
        Some((opt, _)) if !std::ptr::eq(chosen, test) => Err(format!(
            "--{opt} chooses sysbench 0.4/0.5's {} transaction, but the command line names {}: name one test",
            chosen.name, test.name
        )),
        _ => Ok(test),
    }
}

/// The 1.0 test a 0.4/0.5 OLTP mode runs (reference 3.2).
fn chosen_test(
    read_only: bool,
    write_only: bool,
    mode: Option<&str>,
    nontrx: Option<&str>,
) -> Result<&'static TestDef, String> {
    if read_only && write_only {
        // sysbench 0.5's common.lua words it so.
        return Err("--oltp-read-only and --oltp-write-only are mutually exclusive".into());
    }
    let mode = mode.unwrap_or("complex");
    if nontrx.is_some() && mode != "nontrx" {
        return Err(format!(
            "--oltp-nontrx-mode applies to --oltp-test-mode=nontrx, and this run's mode is {mode}"
        ));
    }
    let t: &'static TestDef = match mode {
        "complex" if read_only => &oltp::READ_ONLY,
        "complex" if write_only => &oltp::WRITE_ONLY,
        "complex" => &oltp::READ_WRITE,
        "simple" if write_only => {
            return Err("--oltp-write-only contradicts --oltp-test-mode=simple, whose events are point selects".into())
        }
        "simple" => &oltp::POINT_SELECT,
        "nontrx" => {
            let t: &'static TestDef = match nontrx.unwrap_or("select") {
                "select" => return Err("--oltp-test-mode=nontrx with --oltp-nontrx-mode=select (sysbench 0.4's default: SELECT pad ... WHERE id=?) is not supported: plumb has no such test (oltp_point_select is the nearest, reading c)".into()),
                "update_key" => &oltp::UPDATE_INDEX,
                "update_nokey" => &oltp::UPDATE_NON_INDEX,
                "insert" => &oltp::INSERT,
                "delete" => &oltp::DELETE,
                v => return Err(format!("invalid value for --oltp-nontrx-mode: '{v}' (allowed: select, update_key, update_nokey, insert, delete)")),
            };
            if read_only {
                return Err(format!(
                    "--oltp-read-only contradicts --oltp-nontrx-mode={}, which writes",
                    nontrx.unwrap_or("")
                ));
            }
            t
        }
        "sp" => return Err("--oltp-test-mode=sp (sysbench 0.4's stored procedure, --oltp-sp-name) is not supported: plumb runs sysbench's statements, not a server procedure".into()),
        v => return Err(format!("invalid value for --oltp-test-mode: '{v}' (allowed: complex, simple, nontrx, sp)")),
    };
    Ok(t)
}

/// The test a name gives under plumb's name, 0.4's `oltp` included.
pub fn find(name: &str) -> Option<Result<&'static TestDef, String>> {
    match Origin::of(name, false) {
        Origin::Test04 => Some(Ok(&oltp::READ_WRITE)),
        _ => oltp::from_script(name).or_else(|| testdefs::find(name).map(Ok)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(name: &str, opts: &[&str], dropin: bool) -> Result<(&'static str, Vec<String>), String> {
        let origin = Origin::of(name, dropin);
        let test = find(name).unwrap().unwrap();
        let mut raw: Vec<(String, Option<String>)> = opts
            .iter()
            .map(|o| {
                let b = o.trim_start_matches("--");
                match b.split_once('=') {
                    Some((n, v)) => (n.to_string(), Some(v.to_string())),
                    None => (b.to_string(), None),
                }
            })
            .collect();
        let mut typed: Vec<String> = opts.iter().map(|s| s.to_string()).collect();
        let t = apply(test, origin, &mut raw, &mut typed, dropin)?;
        assert_eq!(raw.len(), typed.len());
        Ok((t.name, raw.into_iter().map(|(n, _)| n).collect()))
    }

    #[test]
    fn modes_choose_sysbench_1_0_tests() {
        let s = "./sysbench/tests/db/oltp.lua";
        assert_eq!(
            run(s, &["--oltp-read-only=on"], true).unwrap().0,
            "oltp_read_only"
        );
        assert_eq!(
            run(s, &["--oltp-write-only"], false).unwrap().0,
            "oltp_write_only"
        );
        assert_eq!(
            run("oltp", &["--oltp-test-mode=simple"], false).unwrap().0,
            "oltp_point_select"
        );
        assert_eq!(
            run(
                "oltp",
                &["--oltp-test-mode=nontrx", "--oltp-nontrx-mode=update_nokey"],
                false
            )
            .unwrap()
            .0,
            "oltp_update_non_index"
        );
        assert!(
            run(s, &["--oltp-read-only=on", "--oltp-write-only=on"], true)
                .unwrap_err()
                .contains("mutually exclusive")
        );
        assert!(run("oltp", &["--oltp-test-mode=nontrx"], false).is_err());
        assert!(run("oltp_read_write", &["--oltp-read-only=on"], false)
            .unwrap_err()
            .contains("name one test"));
        assert_eq!(
            run("oltp_read_only", &["--oltp-read-only=on"], false)
                .unwrap()
                .0,
            "oltp_read_only"
        );
    }

    #[test]
    fn renamed_kept_and_refused_options() {
        let s = "/x/oltp.lua";
        let (_, names) = run(
            s,
            &[
                "--oltp-dist-type=uniform",
                "--rand-init=on",
                "--mysql-engine-trx=yes",
            ],
            true,
        )
        .unwrap();
        assert_eq!(names, ["rand-type", "db-driver"]);
        assert!(run(s, &["--rand-init=on", "--rand-seed=5"], false).is_err());
        assert!(run(s, &["--rand-init=off"], false).is_err());
        assert!(run(s, &["--rand-init=off", "--rand-seed=5"], false).is_ok());
        assert!(run(s, &["--mysql-engine-trx=no"], false).is_err());
        assert!(
            run(s, &["--mysql-engine-trx=yes", "--db-driver=pgsql"], false)
                .unwrap_err()
                .contains("pgsql driver")
        );
        assert!(run(s, &["--mysql-engine-trx=yes", "--pgsql-host=x"], false)
            .unwrap_err()
            .contains("pgsql driver"));
        assert!(run(s, &["--oltp-table-name=x"], false).is_err());
        // sysbench 1.0's own scripts under the drop-in name: left to its option check.
        assert_eq!(
            run("oltp_read_write", &["--oltp-read-only=on"], true)
                .unwrap()
                .1,
            ["oltp-read-only"]
        );
    }
}
