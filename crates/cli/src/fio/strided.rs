//! fio's `zonemode=strided` (`zonesize`, `zonerange`, `zoneskip`), read as fio 3.33 reads
//! them: its fixups (init.c fixup_options) in its words, `zonerange` defaulting to
//! `zonesize`, `zoneskip=Nz` as N zone sizes. The walk itself is plumb-fileio's
//! ([`plumb_fileio::walk`]).
//!
//! Refused, with the combinations plumb does not walk in zones as fio does: `zonemode=zbd`,
//! holes or runs between requests (`rw=read:N`, `percentage_random`), trim then write,
//! verify, a skewed or lfsr random order, a random job with more than one block size or
//! an alignment of its own, a random zone range larger than the region or smaller than a
//! block, a file service other than one request each in turn over several files, and
//! ioengine=mmap on a file larger than the region.

use plumb_fileio::access::{Access, Mix};
use plumb_fileio::spec::{BlockSizes, FileService, NamedFile, StridedZones};

use super::translate::{parse_err, unsupported, JobOptions, TranslateError};
use super::values::{first_field, parse_size, Size};

/// The zone options of a job in strided mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Zoning {
    pub size: u64,
    pub range: u64,
    pub skip: u64,
}

impl Zoning {
    /// The walk's zones, with each file's size as fio finds it at the job's start.
    pub fn spec(&self, file_ends: Vec<u64>) -> StridedZones {
        StridedZones {
            size: self.size,
            range: self.range,
            skip: self.skip,
            file_ends,
        }
    }
}

/// What the job does besides its zones, for the combinations refused.
pub struct Walk<'a> {
    pub access: Access,
    pub rw: &'a str,
    /// `rw=...:N` was given.
    pub holes: bool,
    pub verify: bool,
    pub skewed: bool,
    pub lfsr: bool,
    pub sizes: &'a BlockSizes,
    pub align: u64,
    /// A blockalign other than a direction's smallest size.
    pub own_align: bool,
    pub files: usize,
    pub service: FileService,
}

/// A size option's bytes (its first field; 0 when not set).
fn bytes<J: JobOptions + ?Sized>(j: &J, name: &str) -> Result<u64, TranslateError> {
    let Some(v) = j.get(name) else {
        return Ok(0);
    };
    match parse_size(first_field(v), j.kb_of(name), false) {
        Ok(Size::Bytes(b)) => Ok(b),
        _ => Err(parse_err(name, v)),
    }
}

fn strided<J: JobOptions + ?Sized>(j: &J) -> Result<bool, TranslateError> {
    match j.get("zonemode").unwrap_or("none") {
        "none" => Ok(false),
        "strided" => Ok(true),
        "zbd" => Err(unsupported(
            "zonemode",
            "zbd",
            "plumb has no zoned block device support",
        )),
        v => Err(parse_err("zonemode", v)),
    }
}

/// fio's complaints about the zone options as it adds the job, in its order (none under
/// `--parse-only`, where fio adds no job).
pub fn fixup_lines<J: JobOptions + ?Sized>(j: &J) -> Result<Vec<String>, TranslateError> {
    let size = bytes(j, "zonesize")?;
    let mut lines = Vec::new();
    match (strided(j)?, size) {
        (false, s) if s > 0 => {
            lines.push("fio: --zonemode=none and --zonesize are not compatible.".to_string())
        }
        (true, 0) => lines
            .push("fio: --zonesize must be specified when using --zonemode=strided.".to_string()),
        _ => {}
    }
    Ok(lines)
}

/// The job's zones; `None` under zonemode=none, where fio ignores zonerange and
/// zoneskip (and, as fio refuses a zonesize there, after [`fixup_lines`]).
pub fn zoning<J: JobOptions + ?Sized>(j: &J) -> Result<Option<Zoning>, TranslateError> {
    if !strided(j)? {
        return Ok(None);
    }
    let size = bytes(j, "zonesize")?;
    // fio: an unset (or 0) range is the size, for backward compatibility.
    let range = match bytes(j, "zonerange")? {
        0 => size,
        r => r,
    };
    let skip = match j.get("zoneskip") {
        Some(v) if v.ends_with('z') => zone_count(v)?.saturating_mul(size),
        _ => bytes(j, "zoneskip")?,
    };
    Ok((size > 0).then_some(Zoning { size, range, skip }))
}

/// `zoneskip=Nz`: fio's strtoul of the digits, which must end at the `z`; it keeps N in
/// 32 bits and multiplies by the zone size when it sets the files up.
fn zone_count(v: &str) -> Result<u64, TranslateError> {
    let digits = &v[..v.len() - 1];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(TranslateError::Job(format!(
            "zoneskip: unexpected zone value '{v}'"
        )));
    }
    let n: u128 = digits.parse().unwrap_or(u128::MAX);
    Ok(u64::from(n as u32))
}

/// The combinations plumb does not walk in zones as fio does.
pub fn check(z: &Zoning, w: &Walk<'_>) -> Result<(), TranslateError> {
    let zoned = |why: &str| unsupported("zonemode", "strided", why);
    if w.holes {
        return Err(unsupported(
            "rw",
            w.rw,
            "holes or runs between requests with zonemode=strided",
        ));
    }
    let a = w.access;
    if a.mix == Mix::TrimWrite {
        return Err(unsupported(
            "rw",
            w.rw,
            "trim then write with zonemode=strided",
        ));
    }
    if w.verify {
        return Err(zoned(
            "with verify (the zones write blocks over again, which plumb does not read back as fio does)",
        ));
    }
    if w.files > 1 && w.service != FileService::RoundRobin(1) {
        return Err(zoned(
            "over several files served otherwise than one request each in turn",
        ));
    }
    if a.is_sequential() {
        return Ok(());
    }
    if a.mixes_in_sequential() {
        return Err(zoned("with percentage_random below 100"));
    }
    if w.skewed {
        return Err(zoned(
            "with a random_distribution other than random (fio draws those over the whole file, from the zone's start)",
        ));
    }
    if w.lfsr {
        return Err(zoned("with random_generator=lfsr"));
    }
    let s = w.sizes;
    let one_size = [&s.read, &s.write, &s.trim]
        .iter()
        .zip([a.reads(), a.issues_writes(), a.trims()])
        .filter(|(_, issued)| *issued)
        .all(|(size, _)| size.min() == w.align && size.max() == w.align);
    if !one_size || w.own_align {
        return Err(zoned(
            "on a random job with more than one block size or a blockalign of its own",
        ));
    }
    if z.range < w.align {
        return Err(zoned(
            "on a random job whose zonerange holds no block (fio issues nothing)",
        ));
    }
    Ok(())
}

/// A random job's zone range must lie in its region: fio draws over the whole range and
/// ends the file at the first offset drawn past the region.
pub fn check_region<J: JobOptions + ?Sized>(
    j: &J,
    z: &Zoning,
    random: bool,
    length: u64,
) -> Result<(), TranslateError> {
    if random && z.range > length {
        // The range is zonesize's when zonerange is unset or 0.
        let name = match bytes(j, "zonerange")? {
            0 => "zonesize",
            _ => "zonerange",
        };
        return Err(unsupported(
            name,
            j.get(name).unwrap_or_default(),
            "larger than a random job's region (fio ends the file at the first offset drawn past it)",
        ));
    }
    Ok(())
}

/// plumb's mmap engine maps each file's region only: zones that go on past it, in a
/// larger file, are refused there.
pub fn check_mapped(z: &StridedZones, files: &[NamedFile]) -> Result<(), TranslateError> {
    if z.file_ends
        .iter()
        .zip(files)
        .any(|(&end, f)| end > f.offset + f.length)
    {
        return Err(unsupported(
            "zonemode",
            "strided",
            "on ioengine=mmap in a file larger than the job's region (fio zones it to its end; plumb maps the region's length)",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::translate::TestOpts;

    fn zones(opts: &[(&'static str, &'static str)]) -> Result<Option<Zoning>, TranslateError> {
        zoning(&TestOpts(opts.to_vec()))
    }

    #[test]
    fn the_range_defaults_to_the_size_and_nz_skips_zone_sizes() {
        let z = |size, range, skip| Ok(Some(Zoning { size, range, skip }));
        let strided = ("zonemode", "strided");
        assert_eq!(zones(&[strided, ("zonesize", "16k")]), z(16384, 16384, 0));
        assert_eq!(
            zones(&[strided, ("zonesize", "16k"), ("zonerange", "0")]),
            z(16384, 16384, 0)
        );
        assert_eq!(
            zones(&[
                strided,
                ("zonesize", "16k"),
                ("zonerange", "32k"),
                ("zoneskip", "3z")
            ]),
            z(16384, 32768, 3 * 16384)
        );
        assert_eq!(
            zones(&[strided, ("zonesize", "16k"), ("zoneskip", "64k,8k")]),
            z(16384, 16384, 65536)
        );
        // zonemode=none ignores the others; zbd is refused.
        assert_eq!(zones(&[("zonerange", "8k"), ("zoneskip", "4k")]), Ok(None));
        assert!(matches!(
            zones(&[("zonemode", "zbd")]),
            Err(TranslateError::Unsupported { .. })
        ));
    }

    #[test]
    fn fio_s_fixups_in_its_words() {
        let lines = |opts: &[(&'static str, &'static str)]| fixup_lines(&TestOpts(opts.to_vec()));
        assert_eq!(
            lines(&[("zonesize", "8k")]),
            Ok(vec![
                "fio: --zonemode=none and --zonesize are not compatible.".to_string()
            ])
        );
        assert_eq!(
            lines(&[("zonemode", "strided")]),
            Ok(vec![
                "fio: --zonesize must be specified when using --zonemode=strided.".to_string()
            ])
        );
        assert_eq!(
            lines(&[("zonemode", "strided"), ("zonesize", "8k")]),
            Ok(vec![])
        );
        assert_eq!(lines(&[("zonesize", "0")]), Ok(vec![]));
    }

    #[test]
    fn mmap_maps_no_zone_past_the_region() {
        let files = [NamedFile {
            path: "f".into(),
            offset: 4096,
            length: 65536,
        }];
        let z = Zoning {
            size: 8192,
            range: 8192,
            skip: 0,
        };
        assert!(check_mapped(&z.spec(vec![4096 + 65536]), &files).is_ok());
        assert!(check_mapped(&z.spec(vec![1 << 20]), &files).is_err());
    }
}
