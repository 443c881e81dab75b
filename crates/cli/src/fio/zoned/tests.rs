//! Every rule of the zoned grammar, and each refusal in fio 3.33's words (the lines fio
//! prints, checked against the real fio by tests/fio_zoned.rs).

use super::*;

const K: KbBase = KbBase::K1024;

fn zones(v: &str) -> Vec<(u8, u8)> {
    match skew(v, false, K).unwrap() {
        Skew::Zoned { zones } => zones.iter().map(|z| (z.access_pct, z.size_pct)).collect(),
        s => panic!("{s:?}"),
    }
}

fn abs_zones(v: &str) -> Vec<(u8, u64)> {
    match skew(v, true, K).unwrap() {
        Skew::ZonedAbs { zones } => zones.iter().map(|z| (z.access_pct, z.bytes)).collect(),
        s => panic!("{s:?}"),
    }
}

fn err(v: &str) -> String {
    let absolute = v.starts_with("zoned_abs");
    skew(v, absolute, K).unwrap_err().to_string()
}

fn fio_err(v: &str, why: &str) {
    assert_eq!(
        err(v),
        format!("fio: {why}\nfio: failed parsing random_distribution={v}"),
        "{v}"
    );
}

#[test]
fn shares_of_the_draws_and_of_the_region_in_order() {
    assert_eq!(
        zones("zoned:60/10:30/20:10/70"),
        [(60, 10), (30, 20), (10, 70)]
    );
    // Sizes may leave the end of the region out.
    assert_eq!(zones("zoned:60/10:40/20"), [(60, 10), (40, 20)]);
    // Blanks before a number, trailing blanks, a comment.
    assert_eq!(zones("zoned: 50/50: 50/50 "), [(50, 50), (50, 50)]);
    assert_eq!(zones("zoned:100/50;x"), [(100, 50)]);
    assert_eq!(zones("zoned:100/50#x"), [(100, 50)]);
}

#[test]
fn missing_sizes_share_what_is_left() {
    assert_eq!(zones("zoned:50:50"), [(50, 50), (50, 50)]);
    // A size of 0 is a missing one.
    assert_eq!(zones("zoned:60/0:40/10"), [(60, 90), (40, 10)]);
    assert_eq!(zones("zoned:40:30:30/10"), [(40, 45), (30, 45), (30, 10)]);
    // Rounded down: 100/3 each.
    assert_eq!(zones("zoned:40:30:30"), [(40, 33), (30, 33), (30, 33)]);
    // A lone zone without a size gets none: every draw on the region's first block.
    assert_eq!(zones("zoned:100"), [(100, 0)]);
    assert_eq!(zones("zoned:100/"), [(100, 0)]);
    // After the others took all: nothing for the third.
    assert_eq!(zones("zoned:60/10:40/90:0/0"), [(60, 10), (40, 90), (0, 0)]);
}

#[test]
fn numbers_as_fio_reads_them() {
    // Sizes: C's atoi, above 100 or negative 100.
    assert_eq!(zones("zoned:100/150"), [(100, 100)]);
    assert_eq!(zones("zoned:100/-5"), [(100, 100)]);
    assert_eq!(zones("zoned:100/5x"), [(100, 5)]);
    assert_eq!(zones("zoned:100/50/60"), [(100, 50)]);
    // Shares: numbers with units, kept in a byte.
    assert_eq!(zones("zoned:0x64/50"), [(100, 50)]);
    assert_eq!(zones("zoned:356/50"), [(100, 50)]);
    // Expressions as fio's source has them (Debian's build, without arithmetic, fails).
    assert_eq!(zones("zoned:(50+50)/40"), [(100, 40)]);
    // 255 is fio's "missing" mark; it gets what the others leave: nothing.
    assert_eq!(zones("zoned:255/50:100/50"), [(0, 50), (100, 50)]);
}

#[test]
fn an_empty_entry_ends_the_list() {
    assert_eq!(zones("zoned:100/50::"), [(100, 50)]);
    assert_eq!(zones("zoned:100/50:"), [(100, 50)]);
    fio_err(
        "zoned:50/50::50/50",
        "access percentage don't add up to 100 for zoned random distribution (got=50)",
    );
    // No zones at all: uniform, without the random map.
    assert_eq!(zones("zoned:"), []);
    assert_eq!(abs_zones("zoned_abs:"), []);
}

#[test]
fn absolute_sizes_in_bytes() {
    assert_eq!(
        abs_zones("zoned_abs:60/20k:40/1M"),
        [(60, 20 << 10), (40, 1 << 20)]
    );
    // No size: 0 bytes.
    assert_eq!(abs_zones("zoned_abs:50/64k:50"), [(50, 64 << 10), (50, 0)]);
    // kb_base=1000.
    match skew("zoned_abs:100/1k", true, KbBase::K1000).unwrap() {
        Skew::ZonedAbs { zones } => assert_eq!(zones[0].bytes, 1000),
        s => panic!("{s:?}"),
    }
    // Shares above 100 per zone are allowed before they are added up (no percent rule).
    assert_eq!(abs_zones("zoned_abs:100/4096"), [(100, 4096)]);
}

#[test]
fn sums_are_refused_in_fio_s_words() {
    fio_err(
        "zoned:60/10:30/20",
        "access percentage don't add up to 100 for zoned random distribution (got=90)",
    );
    fio_err(
        "zoned:60/10:50/20",
        "zone_split percentages add to more than 100%",
    );
    fio_err(
        "zoned:60/10:30/95",
        "zone_split percentages add to more than 100%",
    );
    fio_err(
        "zoned:1e2/50",
        "access percentage don't add up to 100 for zoned random distribution (got=1)",
    );
    fio_err(
        "zoned:100k/50",
        "access percentage don't add up to 100 for zoned random distribution (got=0)",
    );
    fio_err(
        "zoned:255/50",
        "access percentage don't add up to 100 for zoned random distribution (got=0)",
    );
    fio_err(
        "zoned_abs:60/1M:30/1M",
        "access percentage don't add up to 100 for zoned random distribution (got=90)",
    );
}

#[test]
fn bad_numbers_and_bad_starts_in_fio_s_words() {
    fio_err("zoned:abc/10:100", "split conversion failed");
    fio_err("zoned:/50", "split conversion failed");
    // The first `/` ends the share, even inside an expression.
    fio_err("zoned:(200/2)", "split conversion failed");
    fio_err("zoned_abs:100/", "split conversion failed");
    fio_err("zoned_abs:100/abc", "split conversion failed");
    fio_err("zoned", "mismatch in zoned input <zoned>");
    fio_err("zoned,x", "mismatch in zoned input <zoned,x>");
    fio_err("zoned_abs", "mismatch in zoned input <zoned_abs>");
}

#[test]
fn what_fio_would_run_into_is_refused_by_plumb() {
    // The second zone starts where the region ends.
    let e = err("zoned:50/100:50");
    assert!(
        e.contains("not supported yet") && e.contains("zone 2 (50% of the draws)"),
        "{e}"
    );
    // A zone of no share there is never drawn: fine.
    assert_eq!(zones("zoned:100/100:0/0"), [(100, 100), (0, 0)]);
    let many = format!("zoned:{}", vec!["1/1"; 256].join(":"));
    assert!(err(&many).contains("256 zones or more"));
    let fewer = format!("zoned:{}:5/5", vec!["1/1"; 95].join(":"));
    assert_eq!(zones(&fewer).len(), 96);
}

#[test]
fn absolute_zones_must_lie_inside_the_region() {
    let s = skew("zoned_abs:50/64k:50/128k", true, K).unwrap();
    let v = "zoned_abs:50/64k:50/128k";
    assert!(check_fit(&s, v, 192 << 10, 4096).is_ok());
    let e = check_fit(&s, v, 128 << 10, 4096).unwrap_err().to_string();
    assert!(
        e.contains("zone 2 (50% of the draws) is not inside the 131072-byte region"),
        "{e}"
    );
    // A zone of no length at the very end.
    let s = skew("zoned_abs:100/64k:0/1:0", true, K).unwrap();
    assert!(check_fit(&s, "x", 64 << 10, 4096).is_ok());
    let s = skew("zoned_abs:0/64k:100", true, K).unwrap();
    assert!(check_fit(&s, "x", 64 << 10, 4096).is_err());
    assert!(check_fit(&Skew::Uniform, "x", 1, 1).is_ok());
}
