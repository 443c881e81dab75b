//! fio's `random_distribution` into plumb's [`Skew`]: `random`, `zipf[:θ[:center]]`,
//! `pareto[:h[:center]]` and `normal[:σ%[:center]]`, with fio 3.33's defaults (θ 1.1, h 0.2,
//! σ 0) and its refusals in its words; `zoned` and `zoned_abs` are read in [`super::zoned`].
//! Also `percentage_random`, the share of a random job's requests whose offset is drawn.

use plumb_core::random::Skew;

use super::translate::TranslateError;
use super::values::KbBase;

const NAME: &str = "random_distribution";

/// fio's defaults when the word comes without a number.
const ZIPF_THETA: f64 = 1.1;
const PARETO_H: f64 = 0.2;

/// The skew `value` asks for (`None`: the option is unset); `kb` reads `zoned_abs` sizes.
pub fn skew(value: Option<&str>, kb: KbBase) -> Result<Skew, TranslateError> {
    let Some(v) = value else {
        return Ok(Skew::Uniform);
    };
    // fio's word ends at the first comma, or without one at the first colon (so a list
    // per direction names no word); the numbers follow the first colon.
    let word = &v[..v.find(',').or_else(|| v.find(':')).unwrap_or(v.len())];
    let rest = v.split_once(':').map(|(_, r)| r);
    let default = match word {
        "random" => return Ok(Skew::Uniform),
        "zipf" => ZIPF_THETA,
        "pareto" => PARETO_H,
        "normal" => 0.0,
        "zoned" => return super::zoned::skew(v, false, kb),
        "zoned_abs" => return super::zoned::skew(v, true, kb),
        _ => return Err(parse_failed(v)),
    };
    let (p, center) = match rest {
        None => (default, None),
        Some(r) => {
            let (a, b) = match r.split_once(':') {
                Some((a, b)) => (a, Some(b)),
                None => (r, None),
            };
            let number = |s: &str| {
                leading_float(s).ok_or_else(|| refused(v, "random postfix parsing failed"))
            };
            (number(a)?, b.map(number).transpose()?)
        }
    };
    if center.is_some_and(|c| !(0.0..=1.0).contains(&c)) {
        return Err(refused(
            v,
            "distribution center out of range (0 <= center <= 1.0)",
        ));
    }
    Ok(match word {
        "zipf" if p == 1.0 => return Err(refused(v, "zipf theta must different than 1.0")),
        "zipf" => Skew::Zipf { theta: p, center },
        "pareto" if p <= 0.0 || p >= 1.0 => {
            return Err(refused(v, "pareto input out of range (0 < input < 1.0)"))
        }
        "pareto" => Skew::Pareto { h: p, center },
        _ if !(0.0..100.0).contains(&p) => {
            return Err(refused(
                v,
                "normal deviation out of range (0 <= input < 100.0)",
            ))
        }
        _ => Skew::Normal {
            spread_pct: p,
            center,
        },
    })
}

/// fio's `percentage_random=R[,W[,T]]`: per direction, the share of a random order's
/// requests whose offset is drawn (default 100 each; the option check has kept each value
/// within 0..=100).
pub fn random_pct(value: Option<&str>, kb: KbBase) -> Result<[u8; 3], TranslateError> {
    let Some(v) = value else {
        return Ok([100; 3]);
    };
    // As fio reads an r,w,t list: a field that fails keeps its direction's 100.
    let per_dir = super::options::find("percentage_random")
        .map(|o| o.rwt_values(v, kb))
        .unwrap_or_default();
    if per_dir.iter().all(Option::is_none) {
        return Err(TranslateError::Parse {
            name: "percentage_random".into(),
            value: v.into(),
        });
    }
    Ok(per_dir.map(|p| p.map_or(100, |n| n.min(100) as u8)))
}

/// A number as C's strtod reads one: leading blanks skipped, the longest prefix that is a
/// number (`0.25x` is 0.25). Infinities and NaN, which fio takes and cannot use, are refused.
fn leading_float(s: &str) -> Option<f64> {
    let s = s.trim_start();
    let end = s
        .char_indices()
        .map(|(i, c)| i + c.len_utf8())
        .rev()
        .find(|&i| s[..i].parse::<f64>().is_ok())?;
    s[..end].parse::<f64>().ok().filter(|f| f.is_finite())
}

pub(super) fn parse_failed(v: &str) -> TranslateError {
    TranslateError::Parse {
        name: NAME.into(),
        value: v.into(),
    }
}

/// fio's reason, then its `failed parsing` line.
pub(super) fn refused(v: &str, why: &str) -> TranslateError {
    TranslateError::Job(format!("fio: {why}\n{}", parse_failed(v)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(v: &str) -> Skew {
        skew(Some(v), KbBase::K1024).unwrap()
    }

    fn err(v: &str) -> String {
        skew(Some(v), KbBase::K1024).unwrap_err().to_string()
    }

    #[test]
    fn words_numbers_and_centers() {
        assert_eq!(skew(None, KbBase::K1024).unwrap(), Skew::Uniform);
        assert_eq!(ok("random"), Skew::Uniform);
        assert_eq!(
            ok("zipf"),
            Skew::Zipf {
                theta: 1.1,
                center: None
            }
        );
        assert_eq!(
            ok("zipf:1.2:0.25"),
            Skew::Zipf {
                theta: 1.2,
                center: Some(0.25)
            }
        );
        assert_eq!(
            ok("pareto"),
            Skew::Pareto {
                h: 0.2,
                center: None
            }
        );
        assert_eq!(
            ok("pareto:0.3:0"),
            Skew::Pareto {
                h: 0.3,
                center: Some(0.0)
            }
        );
        assert_eq!(
            ok("normal"),
            Skew::Normal {
                spread_pct: 0.0,
                center: None
            }
        );
        assert_eq!(
            ok("normal: 5:0.75x"),
            Skew::Normal {
                spread_pct: 5.0,
                center: Some(0.75)
            }
        );
    }

    #[test]
    fn refusals_in_fio_s_words() {
        assert_eq!(
            err("zipf:1"),
            "fio: zipf theta must different than 1.0\nfio: failed parsing random_distribution=zipf:1"
        );
        assert!(err("zipf:1e0").starts_with("fio: zipf theta must different"));
        assert!(err("pareto:1.5").starts_with("fio: pareto input out of range (0 < input < 1.0)"));
        assert!(err("normal:100").starts_with("fio: normal deviation out of range"));
        assert!(err("zipf:1.2:2").starts_with("fio: distribution center out of range"));
        assert!(err("zipf:abc").starts_with("fio: random postfix parsing failed"));
        assert!(err("normal:5:").starts_with("fio: random postfix parsing failed"));
        assert!(err("zipf:inf").starts_with("fio: random postfix parsing failed"));
        assert_eq!(
            err("zipf:1.2,pareto:0.3"),
            "fio: failed parsing random_distribution=zipf:1.2,pareto:0.3"
        );
        // fio 3.33 has no 'gauss' word for offsets (only for file_service_type).
        assert_eq!(
            err("gauss:5"),
            "fio: failed parsing random_distribution=gauss:5"
        );
    }

    #[test]
    fn a_comma_ends_the_word_as_in_fio() {
        // fio matches `zipf` and finds no number after a colon: its defaults.
        assert_eq!(
            ok("zipf,x"),
            Skew::Zipf {
                theta: 1.1,
                center: None
            }
        );
        assert_eq!(ok("random,x"), Skew::Uniform);
        assert_eq!(
            err("zoned,x"),
            "fio: mismatch in zoned input <zoned,x>\nfio: failed parsing random_distribution=zoned,x"
        );
        assert!(matches!(ok("zoned:60/10:40/90"), Skew::Zoned { .. }));
    }

    #[test]
    fn percentage_random_per_direction() {
        let k = KbBase::K1024;
        assert_eq!(random_pct(None, k).unwrap(), [100; 3]);
        assert_eq!(random_pct(Some("50"), k).unwrap(), [50; 3]);
        assert_eq!(random_pct(Some("50,20"), k).unwrap(), [50, 20, 20]);
        assert_eq!(random_pct(Some("50,"), k).unwrap(), [50, 100, 100]);
        assert_eq!(random_pct(Some("10,20,30"), k).unwrap(), [10, 20, 30]);
        assert_eq!(random_pct(Some("0:100"), k).unwrap(), [0, 100, 100]);
        // A field that fails keeps its direction, as in fio.
        assert_eq!(random_pct(Some("abc,50"), k).unwrap(), [100, 50, 50]);
        assert_eq!(random_pct(Some("101,50"), k).unwrap(), [100, 50, 50]);
        assert_eq!(
            random_pct(Some("101"), k).unwrap_err().to_string(),
            "fio: failed parsing percentage_random=101"
        );
    }
}
