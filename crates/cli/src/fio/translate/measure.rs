//! Which of fio's measurements a job reports: `gtod_reduce`, the `disable_*` switches, the
//! percentile tables, `stats`, and the report's number formats (`significant_figures`,
//! `unit_base`).
//!
//! plumb keeps timing every request whatever these say: its findings read the latency
//! histograms, and its clock costs a TSC read where fio's switches exist to save
//! `gettimeofday` calls. What the switches change is what fio's report shows, which is
//! what the fio front end promises: the lines fio leaves out, plumb leaves out.

use super::{parse_err, unsupported, Get, JobOptions, TranslateError};

/// The measurement switches of one job, resolved as fio resolves them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Measured {
    pub slat: bool,
    pub clat: bool,
    pub lat: bool,
    pub slat_percentiles: bool,
    pub clat_percentiles: bool,
    pub lat_percentiles: bool,
    /// `stats=0`: the job runs but is left out of the report.
    pub stats: bool,
    pub sig_figs: u32,
    /// `unit_base=1`: bandwidth in bits.
    pub unit_bits: bool,
}

pub(super) fn measured<J: JobOptions + ?Sized>(
    g: &Get<'_, J>,
    logs: Logs,
) -> Result<Measured, TranslateError> {
    // gtod_reduce=1 sets the four switches and clears the percentile tables when it is
    // parsed; a switch or table given as well is taken as given (fio applies options in
    // order, and the usual order is gtod_reduce first). Then fio's fixup clears the table
    // of every disabled series.
    let gtod = g.flag("gtod_reduce", false)?;
    let or_gtod = |n: &str| match g.raw(n) {
        Some(_) => g.flag(n, false),
        None => Ok(gtod),
    };
    let (no_slat, no_clat, no_lat, no_bw) = (
        or_gtod("disable_slat")?,
        or_gtod("disable_clat")?,
        or_gtod("disable_lat")?,
        or_gtod("disable_bw_measurement")?,
    );
    let table = |n: &str, default: bool| match g.raw(n) {
        Some(_) => g.flag(n, default),
        None => Ok(default && !gtod),
    };
    // The per-request logs would lose the series a switch turns off; plumb writes every
    // entry it has, so the two together are refused rather than written differently.
    let per_request = logs.window_ms == 0;
    for (off, name, log) in [
        (no_lat, "disable_lat", logs.lat),
        (no_clat, "disable_clat", logs.lat),
        (no_slat, "disable_slat", logs.lat),
        (no_bw, "disable_bw_measurement", logs.bw && per_request),
        (
            gtod || (no_slat && no_clat && no_bw),
            "gtod_reduce",
            logs.iops && per_request,
        ),
    ] {
        if off && log {
            return Err(unsupported(
                name,
                "1",
                "with the per-request log it empties (fio leaves those entries out; plumb does not yet)",
            ));
        }
    }
    let sig_figs = match g.raw("significant_figures") {
        None => 4,
        Some(v) => v
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=10).contains(n))
            .ok_or_else(|| parse_err("significant_figures", v))?,
    };
    let unit_bits = match g.raw("unit_base") {
        None | Some("0" | "8") => false,
        Some("1") => true,
        Some(v) => return Err(parse_err("unit_base", v)),
    };
    Ok(Measured {
        slat: !no_slat,
        clat: !no_clat,
        lat: !no_lat,
        slat_percentiles: table("slat_percentiles", false)? && !no_slat,
        clat_percentiles: table("clat_percentiles", true)? && !no_clat,
        lat_percentiles: table("lat_percentiles", false)? && !no_lat,
        stats: g.flag("stats", true)?,
        sig_figs,
        unit_bits,
    })
}

/// The logs a job writes, as far as the switches care.
#[derive(Clone, Copy, Debug)]
pub(super) struct Logs {
    pub bw: bool,
    pub iops: bool,
    pub lat: bool,
    pub window_ms: u64,
}
