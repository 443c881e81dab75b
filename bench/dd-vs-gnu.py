#!/usr/bin/env python3
"""plumb dd against GNU dd on the same operands: interleaved, 3 rounds, medians and ranges
of the MB/s each achieved (the bytes and seconds each prints). Holds /tmp/plumb-bench.lock so benchmarks never overlap.

    flock /tmp/plumb-bench.lock python3 bench/dd-vs-gnu.py [--plumb target/release/plumb] [--dir DIR]
        [--rounds N] [--gnu-vs-gnu]

With --gnu-vs-gnu, GNU dd runs in both seats: the per-round ratios of GNU dd against itself
are the host's noise floor, what the +-5% target can be judged against.
"""
import argparse, os, re, statistics, subprocess, sys

CASES = [
    ["if=/dev/zero", "of={dir}/dd-bench", "bs=1M", "count=2048", "conv=fdatasync"],
    ["if=/dev/zero", "of={dir}/dd-bench", "bs=1M", "count=2048", "oflag=direct"],
    ["if={dir}/dd-bench", "of=/dev/null", "bs=1M", "iflag=direct"],
    ["if=/dev/zero", "of=/dev/null", "bs=64K", "count=2000000"],
]

def rate(stderr):
    """MB/s from the bytes and seconds dd prints (its own rate has two or three digits)."""
    m = re.search(r"^(\d+) bytes .* copied, ([0-9.e+-]+) s, ", stderr, re.M)
    if not m:
        raise SystemExit("no rate in:\n" + stderr)
    return int(m.group(1)) / float(m.group(2)) / 1e6

def disk_of(path):
    """The whole disk under `path`'s filesystem, as /sys/block names it."""
    st = os.stat(path)
    sysdev = os.path.realpath(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
    if os.path.exists(os.path.join(sysdev, "partition")):
        sysdev = os.path.dirname(sysdev)
    return os.path.basename(sysdev)


def requests(disk):
    """Reads and writes the disk has completed so far."""
    f = open(f"/sys/block/{disk}/stat").read().split()
    return int(f[0]), int(f[4])


def run(cmd, disk, blocks):
    """MB/s, and the device requests per dd block (None when the case has no disk I/O)."""
    before = requests(disk)
    p = subprocess.run(cmd, capture_output=True, text=True)
    after = requests(disk)
    if p.returncode != 0:
        raise SystemExit(f"{cmd} failed:\n{p.stderr}")
    done = max(after[0] - before[0], after[1] - before[1])
    return rate(p.stderr), (done / blocks if blocks else None)

def main():
    # Each round's line as it is measured: a run cut short by a time limit keeps them.
    sys.stdout.reconfigure(line_buffering=True)
    a = argparse.ArgumentParser()
    a.add_argument("--plumb", default="target/release/plumb")
    a.add_argument("--dir", default=".")
    a.add_argument("--rounds", type=int, default=3)
    a.add_argument("--gnu-vs-gnu", action="store_true",
                   help="GNU dd in plumb's seat too: the host's own round-to-round noise")
    args = a.parse_args()
    if os.environ.get("FLOCKER") != "1":
        os.environ["FLOCKER"] = "1"
        os.execvp("flock", ["flock", "/tmp/plumb-bench.lock", sys.executable] + sys.argv)
    disk = disk_of(args.dir)
    for case in CASES:
        ops = [c.format(dir=args.dir) for c in case]
        # 1 MiB direct blocks: whether the kernel cuts one into two device requests (a
        # buffer whose pages are not physically contiguous exceeds virtio's 254 segments)
        # moves the rate by a fifth on this host, for either tool, at random.
        blocks = 2048 if "bs=1M" in ops and any("direct" in o for o in ops) else 0
        res = {"gnu": [], "plumb": []}
        shape = {"gnu": [], "plumb": []}
        for r in range(args.rounds):
            # Alternate who goes first: the second writer of a round truncates the file the
            # first one just wrote, and the disk's state differs for it.
            order = ["gnu", "plumb"] if r % 2 == 0 else ["plumb", "gnu"]
            for who in order:
                if who == "gnu" or args.gnu_vs_gnu:
                    cmd = ["dd"]
                else:
                    cmd = [args.plumb, "dd", "--no-history"]
                r, per_block = run(cmd + ops, disk, blocks)
                res[who].append(r)
                shape[who].append(per_block)
        g, p = statistics.median(res["gnu"]), statistics.median(res["plumb"])
        print(" ".join(ops))
        for k in ("gnu", "plumb"):
            v = res[k]
            label = "gnu-B" if k == "plumb" and args.gnu_vs_gnu else k
            print(f"  {label:6} median {statistics.median(v):10.1f} MB/s  range {min(v):.1f}..{max(v):.1f}")
        # Each round's two runs are back to back: the disk's drift between rounds cancels.
        rv = [x / y for x, y in zip(res["plumb"], res["gnu"])]
        pair = "gnu-B/gnu" if args.gnu_vs_gnu else "plumb/gnu"
        print(f"  {pair} {p / g:.3f}  per-round ratios {statistics.median(rv):.3f} "
              f"[{min(rv):.3f}-{max(rv):.3f}]")
        if blocks:
            cut = lambda v: "cut" if v >= 1.5 else "whole"
            rounds = list(zip(res["plumb"], res["gnu"], shape["plumb"], shape["gnu"]))
            print("  device requests per block, per round (plumb-seat/gnu): " + ", ".join(
                f"{a:.2f}/{b:.2f}" for _, _, a, b in rounds))
            same = [x / y for x, y, a, b in rounds if cut(a) == cut(b)]
            if same:
                print(f"  rounds where both blocks reached the device alike: {len(same)} of "
                      f"{len(rounds)}, ratio {statistics.median(same):.3f} "
                      f"[{min(same):.3f}-{max(same):.3f}]")
    try:
        os.remove(os.path.join(args.dir, "dd-bench"))
    except FileNotFoundError:
        pass

if __name__ == "__main__":
    main()
