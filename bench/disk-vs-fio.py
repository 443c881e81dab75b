#!/usr/bin/env python3
"""`plumb disk --quick` against fio 3.33 running the same presets (issue 10's targets:
plumb disk --quick finishes in < 60 s; each figure within +-10% of fio's for the same preset).

fio gets exactly the jobs plumb disk runs (libaio, direct=1, stonewalled, the same file, size,
run time and ramp, the same preconditioning write first), in one fio invocation. Rounds are
interleaved, the order alternating, each holding `flock /tmp/plumb-bench.lock`. Prints
per-round figures, then per preset and direction the medians with [min-max] and the ratio
plumb/fio, and plumb's wall time.

With --fio-vs-fio, fio runs in both seats (the second run of a round stands where plumb
would): the per-round ratios of fio against itself are this disk's noise floor, what the
+-10% target can be judged against.

plumb disk's buffers are in transparent huge pages, so its 1 MiB requests reach the disk
whole; fio's come from malloc, and a disk that takes fewer segments per request than a 1 MiB
buffer has pages (virtio: 254 < 256) gets them cut in two whenever the pages are not
physically contiguous, at random per run. --fio-mem=mmaphuge gives fio physically contiguous
buffers too (it reserves vm.nr_hugepages for the run, as root, and restores it), so both
tools send the disk the same requests; fio's default (malloc) measures fio as users run it.

--fio-extra passes more options to every fio job (e.g. --fio-extra=--scramble_buffers=0: fio
then writes its buffers as first filled, without stamping each 512 bytes before every write,
which costs fio a tenth of its 1 MiB write bandwidth at queue depth 1 on a 3 GB/s disk).

Usage: bench/disk-vs-fio.py [--rounds N] [--dir DIR] [--fio-vs-fio] [--fio-mem malloc|mmaphuge]
       [--fio-extra=OPTION ...]     PLUMB=path/to/plumb
"""

import argparse
import json
import os
import statistics
import subprocess
import time

LOCK = "/tmp/plumb-bench.lock"
PRESETS = [("SEQ1M-Q8T1", "read", "1m", 8), ("SEQ1M-Q1T1", "read", "1m", 1),
           ("RND4K-Q32T1", "randread", "4k", 32), ("RND4K-Q1T1", "randread", "4k", 1)]


HUGEPAGES = "/proc/sys/vm/nr_hugepages"


def fio_args(path, size, secs, mem, extra):
    ramp = max(secs // 5, 1)
    a = [f"--filename={path}", f"--size={size}", "--direct=1", "--ioengine=libaio",
         "--output-format=json", f"--iomem={mem}", *extra,
         # The same preconditioning write plumb disk does before its tests.
         "--name=precondition", "--rw=write", "--bs=1m", "--iodepth=8"]
    for d in ("read", "write"):
        for name, rw, bs, depth in PRESETS:
            rw = rw.replace("read", "write") if d == "write" else rw
            a += [f"--name={name}-{d}", "--stonewall", f"--rw={rw}", f"--bs={bs}",
                  f"--iodepth={depth}", "--time_based", f"--runtime={secs}", f"--ramp_time={ramp}"]
    return a


def plumb_round(plumb, d):
    out = os.path.join(d, "plumb-disk.json")
    t = time.monotonic()
    subprocess.run(["flock", LOCK, plumb, "disk", d, "--quick", "--keep-file", "--no-history",
                    f"--json={out}"], check=True, capture_output=True)
    wall = time.monotonic() - t
    doc = json.load(open(out))
    res = {}
    for g in doc["groups"]:
        for j in g["jobs"]:
            if j["name"] == "precondition":
                continue
            w = j["name"].endswith("write")
            b = j["counters"].get("bytes_written" if w else "bytes_read", 0)
            res[j["name"]] = b / j["total_time_s"] / 1e6
    return res, wall


def fio_round(d, mem, extra):
    p = subprocess.run(["flock", LOCK, "fio"] + fio_args(os.path.join(d, "plumb-disk.dat"), "512M", 2, mem, extra),
                       check=True, capture_output=True, text=True)
    doc = json.loads(p.stdout)
    res = {}
    for j in doc["jobs"]:
        if j["jobname"] == "precondition":
            continue
        w = j["jobname"].endswith("write")
        res[j["jobname"]] = j["write" if w else "read"]["bw_bytes"] / 1e6
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dir", default="/tmp/plumb-bench-disk")
    ap.add_argument("--fio-vs-fio", action="store_true",
                    help="fio in plumb's seat too: the disk's own round-to-round noise")
    ap.add_argument("--fio-mem", choices=["malloc", "mmaphuge"], default="malloc",
                    help="fio's buffers: malloc (its default) or reserved huge pages")
    ap.add_argument("--fio-extra", action="append", default=[],
                    help="another fio option for every job (repeatable)")
    a = ap.parse_args()
    reserved = None
    if a.fio_mem == "mmaphuge":
        reserved = open(HUGEPAGES).read().strip()
        # 16 pages of 2 MiB: the largest job (8 x 1 MiB) needs 5.
        with open(HUGEPAGES, "w") as f:
            f.write("16")
    try:
        run(a)
    finally:
        if reserved is not None:
            with open(HUGEPAGES, "w") as f:
                f.write(reserved)


def run(a):
    plumb = os.path.abspath(os.environ.get("PLUMB", "target/release/plumb"))
    os.makedirs(a.dir, exist_ok=True)
    ours, theirs, walls = [], [], []
    seat = "fio-B" if a.fio_vs_fio else "plumb"
    print(f"fio buffers: {a.fio_mem}; more fio options: {a.fio_extra}", flush=True)

    def ours_round():
        if a.fio_vs_fio:
            return fio_round(a.dir, a.fio_mem, a.fio_extra), 0.0
        return plumb_round(plumb, a.dir)

    for r in range(a.rounds):
        # Alternate which tool goes first: the one that follows reads a file the host may
        # still cache from the other's run.
        if r % 2 == 0:
            p, wall = ours_round()
            f = fio_round(a.dir, a.fio_mem, a.fio_extra)
        else:
            f = fio_round(a.dir, a.fio_mem, a.fio_extra)
            p, wall = ours_round()
        ours.append(p)
        theirs.append(f)
        walls.append(wall)
        print(f"round {r + 1}: {seat} {wall:.1f} s {p}\n          fio {f}", flush=True)
    for name in ours[0]:
        pv = [o[name] for o in ours]
        fv = [t[name] for t in theirs]
        pm, fm = statistics.median(pv), statistics.median(fv)
        # Each round's two runs are back to back: the disk's drift between rounds cancels.
        rv = [x / y for x, y in zip(pv, fv)]
        print(f"{name:18} MB/s {seat} {pm:9.1f} [{min(pv):.1f}-{max(pv):.1f}]  fio {fm:9.1f} "
              f"[{min(fv):.1f}-{max(fv):.1f}]  ratio {pm / fm:.2f}  per-round ratios "
              f"{statistics.median(rv):.3f} [{min(rv):.3f}-{max(rv):.3f}]")
    if a.fio_vs_fio:
        return
    print(f"plumb disk --quick wall time: median {statistics.median(walls):.1f} s "
          f"[{min(walls):.1f}-{max(walls):.1f}]")


if __name__ == "__main__":
    main()
