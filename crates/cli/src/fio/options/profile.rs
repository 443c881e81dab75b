//! The options fio 3.33's built-in profiles register (profiles/tiobench.c, profiles/act.c).
//! fio adds them to its option table at start-up, so a job may set them whether or not it
//! names the profile (`threads=1` parses, meaning tiobench's thread count); they change
//! nothing unless `profile=` selects their profile, which plumb refuses. Like fio's
//! `--cmdhelp`, plumb's help does not list them. tiobench's `size` is the main table's.

use super::{Kind, Opt};

const fn profile_opt(name: &'static str, kind: Kind, help: &'static str) -> Opt {
    Opt {
        name,
        alias: None,
        kind,
        help,
        default: None,
        range: None,
        values: &[],
        parent: None,
        prio: 0,
        seconds: false,
        time: matches!(kind, Kind::StrValTime),
        engines: &[],
        supported: true,
    }
}

pub(super) static PROFILE: &[Opt] = &[
    profile_opt("block", Kind::Int, "Block size in bytes"),
    profile_opt("numruns", Kind::Int, "Number of runs"),
    profile_opt("dir", Kind::StrStore, "Test directory"),
    profile_opt("threads", Kind::Int, "Number of Threads"),
    profile_opt("device-names", Kind::StrStore, "Devices to use"),
    profile_opt("load", Kind::Int, "ACT load multipler (default 1x)"),
    profile_opt("test-duration", Kind::StrValTime, "How long to run ACT for"),
    profile_opt(
        "threads-per-queue",
        Kind::Int,
        "Number of read I/O threads per device",
    ),
    profile_opt(
        "read-req-num-512-blocks",
        Kind::Int,
        "Number of 512B blocks to read at the time",
    ),
    profile_opt(
        "large-block-op-kbytes",
        Kind::Int,
        "Size of large block ops in KiB (writes)",
    ),
    profile_opt("prep", Kind::StrSet, "Set to run ACT prep phase"),
];
