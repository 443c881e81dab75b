#!/usr/bin/env python3
"""plumb dd against GNU dd on the same operands: interleaved, 3 rounds, medians and ranges
of the MB/s each achieved (the bytes and seconds each prints). Holds /tmp/plumb-bench.lock so benchmarks never overlap.

    flock /tmp/plumb-bench.lock python3 bench/dd-vs-gnu.py [--plumb target/release/plumb] [--dir DIR]
"""
import argparse, os, re, statistics, subprocess, sys

CASES = [
    ["if=/dev/zero", "of={dir}/dd-bench", "bs=1M", "count=2048", "conv=fdatasync"],
    ["if=/dev/zero", "of={dir}/dd-bench", "bs=1M", "count=2048", "oflag=direct"],
    ["if={dir}/dd-bench", "of=/dev/null", "bs=1M", "iflag=direct"],
    ["if=/dev/zero", "of=/dev/null", "bs=64K", "count=200000"],
]

def rate(stderr):
    """MB/s from the bytes and seconds dd prints (its own rate has two or three digits)."""
    m = re.search(r"^(\d+) bytes .* copied, ([0-9.e+-]+) s, ", stderr, re.M)
    if not m:
        raise SystemExit("no rate in:\n" + stderr)
    return int(m.group(1)) / float(m.group(2)) / 1e6

def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"{cmd} failed:\n{p.stderr}")
    return rate(p.stderr)

def main():
    a = argparse.ArgumentParser()
    a.add_argument("--plumb", default="target/release/plumb")
    a.add_argument("--dir", default=".")
    a.add_argument("--rounds", type=int, default=3)
    args = a.parse_args()
    if os.environ.get("FLOCKER") != "1":
        os.environ["FLOCKER"] = "1"
        os.execvp("flock", ["flock", "/tmp/plumb-bench.lock", sys.executable] + sys.argv)
    for case in CASES:
        ops = [c.format(dir=args.dir) for c in case]
        res = {"gnu": [], "plumb": []}
        for r in range(args.rounds):
            # Alternate who goes first: the second writer of a round truncates the file the
            # first one just wrote, and the disk's state differs for it.
            order = ["gnu", "plumb"] if r % 2 == 0 else ["plumb", "gnu"]
            for who in order:
                cmd = ["dd"] if who == "gnu" else [args.plumb, "dd", "--no-history"]
                res[who].append(run(cmd + ops))
        g, p = statistics.median(res["gnu"]), statistics.median(res["plumb"])
        print(" ".join(ops))
        for k in ("gnu", "plumb"):
            v = res[k]
            print(f"  {k:6} median {statistics.median(v):10.1f} MB/s  range {min(v):.1f}..{max(v):.1f}")
        # Each round's two runs are back to back: the disk's drift between rounds cancels.
        rv = [x / y for x, y in zip(res["plumb"], res["gnu"])]
        print(f"  plumb/gnu {p / g:.3f}  per-round ratios {statistics.median(rv):.3f} "
              f"[{min(rv):.3f}-{max(rv):.3f}]")
    try:
        os.remove(os.path.join(args.dir, "dd-bench"))
    except FileNotFoundError:
        pass

if __name__ == "__main__":
    main()
