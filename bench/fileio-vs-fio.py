#!/usr/bin/env python3
"""plumb fileio against fio on the same work, interleaved, several rounds; prints ratios.

Cases (issue 3's targets):
  null     4 KiB random read, no I/O (fio ioengine=null vs plumb --file-io-mode=null), 1 thread
  uring    4 KiB random read, O_DIRECT, io_uring, 32 in flight, 1 thread, 1 GiB file
  libaio   the same with libaio
  shm      4 KiB random read, buffered, sync (fio psync), 1 GiB file in /dev/shm

Each measurement runs under `flock /tmp/plumb-bench.lock` (other helpers measure too) and
under /usr/bin/time for the CPU time of the whole process. CPU per I/O = (user + sys) / I/Os.

Usage: bench/fileio-vs-fio.py [--rounds N] [--time S] [--dir DIR] [--cases null,uring,...]
       PLUMB=path/to/plumb (default target/release/plumb)
"""

import argparse
import json
import os
import subprocess
import sys

LOCK = "/tmp/plumb-bench.lock"


def timed(cmd, cwd=None):
    """Run cmd under flock and /usr/bin/time; return (stdout, user+sys seconds)."""
    full = ["flock", LOCK, "/usr/bin/time", "-f", "PLUMB_BENCH_TIME %U %S"] + cmd
    p = subprocess.run(full, capture_output=True, text=True, cwd=cwd)
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr}")
    cpu = None
    for line in p.stderr.splitlines():
        if line.startswith("PLUMB_BENCH_TIME"):
            _, u, s = line.split()
            cpu = float(u) + float(s)
    return p.stdout, cpu


def fio(case, t, path):
    base = ["fio", "--name=bench", "--rw=randread", "--bs=4k", "--size=1G",
            f"--runtime={t}", "--time_based", "--output-format=json"]
    if case == "null":
        args = ["--ioengine=null"]
    elif case in ("uring", "libaio"):
        eng = "io_uring" if case == "uring" else "libaio"
        args = [f"--ioengine={eng}", "--iodepth=32", "--direct=1", f"--filename={path}"]
    else:
        args = ["--ioengine=psync", f"--filename={path}"]
    out, cpu = timed(base + args)
    v = json.loads(out[out.index("{"):])
    r = v["jobs"][0]["read"]
    return r["iops"], cpu / max(r["total_ios"], 1)


def plumb(exe, case, t, d):
    base = [exe, "fileio", f"--file-dir={d}", "--file-num=1", "--file-total-size=1G",
            "--file-block-size=4K", "--file-test-mode=rndrd", f"--time={t}",
            "--format=json"]
    if case == "null":
        args = ["--file-io-mode=null"]
    elif case in ("uring", "libaio"):
        eng = "io_uring" if case == "uring" else "libaio"
        args = ["--file-io-mode=async", f"--file-async-engine={eng}",
                "--file-async-backlog=32", "--file-extra-flags=direct"]
    else:
        args = ["--file-io-mode=sync"]
    out, cpu = timed(base + args + ["run"])
    v = json.loads(out)["groups"][0]["jobs"][0]  # plumb.result/2: one group, one job
    assert v["workload"]["engine"] in ("null", "io_uring", "libaio", "sync"), v["workload"]
    return v["events_per_s"], cpu / max(v["events"], 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--time", type=int, default=5)
    ap.add_argument("--dir", default="/tmp/plumb-bench")
    ap.add_argument("--shm", default="/dev/shm/plumb-bench")
    ap.add_argument("--cases", default="null,uring,libaio,shm")
    a = ap.parse_args()
    exe = os.environ.get("PLUMB", "target/release/plumb")
    cases = a.cases.split(",")
    for d in (a.dir, a.shm):
        os.makedirs(d, exist_ok=True)
        if any(c in cases for c in (("uring", "libaio") if d == a.dir else ("shm",))):
            subprocess.run([exe, "fileio", f"--file-dir={d}", "--file-num=1",
                            "--file-total-size=1G", "prepare"], check=True,
                           capture_output=True)
    print(f"load at start: {os.getloadavg()[0]:.2f}")
    print(f"{'case':7} {'round':>5} {'fio IOPS':>12} {'plumb IOPS':>12} {'ratio':>6} "
          f"{'fio CPU/IO':>11} {'plumb CPU/IO':>12} {'ratio':>6}  load")
    ratios = {c: [] for c in cases}
    for rnd in range(1, a.rounds + 1):
        for c in cases:
            path = os.path.join(a.shm if c == "shm" else a.dir, "test_file.0")
            d = a.shm if c == "shm" else a.dir
            # Alternate who goes first, so drift in machine load does not favour one side.
            if rnd % 2:
                f_iops, f_cpu = fio(c, a.time, path)
                p_iops, p_cpu = plumb(exe, c, a.time, d)
            else:
                p_iops, p_cpu = plumb(exe, c, a.time, d)
                f_iops, f_cpu = fio(c, a.time, path)
            ratios[c].append((p_iops / f_iops, p_cpu / f_cpu))
            print(f"{c:7} {rnd:>5} {f_iops:>12.0f} {p_iops:>12.0f} {p_iops / f_iops:>6.2f} "
                  f"{f_cpu * 1e6:>9.2f}us {p_cpu * 1e6:>10.2f}us {p_cpu / f_cpu:>6.2f}  "
                  f"{os.getloadavg()[0]:.2f}", flush=True)
    for d in (a.dir, a.shm):
        subprocess.run([exe, "fileio", f"--file-dir={d}", "cleanup"], capture_output=True)
    print()
    for c in cases:
        io = sorted(r[0] for r in ratios[c])
        cpu = sorted(r[1] for r in ratios[c])
        print(f"{c:7} IOPS ratio median {io[len(io) // 2]:.2f} (min {io[0]:.2f}, max {io[-1]:.2f}); "
              f"CPU/IO ratio median {cpu[len(cpu) // 2]:.2f}")


if __name__ == "__main__":
    main()
