#!/usr/bin/env python3
"""The fio walk's own speed, two builds against each other, seats balanced.

Runs the same null-engine job (no I/O: the walk, the worker loop and the counting are all
there is) with build A and build B as `fio`, in ABBA order per round (A B, then B A), each
run under flock /tmp/plumb-bench.lock. On this 2-CPU VM the run that goes first in a pair
was faster most of the time whichever build it was (docs/performance.md, session 21), so
a plain alternation measures the seat; ABBA gives each build each seat equally often.

Usage: bench/fio-null-abba.py A_BIN B_BIN [--rounds N] [--runtime S] [--rw randread]
Prints each run's IOPS, the medians, and the per-round ratio B/A (each round's two runs
of a build averaged), median and range.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

LOCK = "/tmp/plumb-bench.lock"


def iops(binary, rw, runtime):
    with tempfile.TemporaryDirectory() as d:
        link = os.path.join(d, "fio")
        os.symlink(os.path.abspath(binary), link)
        cmd = ["flock", LOCK, link, "--name=w", "--ioengine=null", "--size=64g", "--bs=4k",
               f"--rw={rw}", "--time_based", f"--runtime={runtime}", "--output-format=json"]
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=d)
        if p.returncode != 0:
            sys.exit(f"{binary} failed: {p.stderr}")
        job = json.loads(p.stdout)["jobs"][0]
        side = "read" if "read" in rw else "write"
        return job[side]["iops"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--runtime", type=int, default=3)
    ap.add_argument("--rw", default="randread")
    o = ap.parse_args()
    runs = {"A": [], "B": []}
    ratios = []
    for r in range(o.rounds):
        got = {"A": [], "B": []}
        for who in ("A", "B", "B", "A") if r % 2 == 0 else ("B", "A", "A", "B"):
            v = iops(o.a if who == "A" else o.b, o.rw, o.runtime)
            got[who].append(v)
            runs[who].append(v)
            print(f"round {r + 1} {who}: {v / 1e6:.2f} M IOPS", flush=True)
        ratios.append(statistics.mean(got["B"]) / statistics.mean(got["A"]))
    for who in ("A", "B"):
        v = runs[who]
        print(f"{who}: median {statistics.median(v) / 1e6:.2f} M [{min(v) / 1e6:.2f}-{max(v) / 1e6:.2f}]")
    print(f"B/A per round: median {statistics.median(ratios):.3f} [{min(ratios):.3f}-{max(ratios):.3f}]")


if __name__ == "__main__":
    main()
