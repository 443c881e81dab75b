#!/usr/bin/env python3
"""`plumb fio` against fio 3.33 on the same command line or job file, interleaved, in rounds.

Both tools get exactly the same fio arguments; only the binary differs. Cases (issue 8's
targets):
  null     4 KiB randread, ioengine=null, latency recorded           target: plumb >= 3x IOPS
  shm      4 KiB randread, psync, 1 GiB file in /dev/shm             target: >= 1.1x IOPS
  uring    4 KiB randread, io_uring, O_DIRECT, iodepth 32, on disk   target: >= 1.0x IOPS,
  libaio   the same with libaio                                      CPU per I/O <= 0.8x
  seed003-norefill  the same without its refill_buffers line (fio's data making aside)
  smallfile 4 KiB randread, psync, buffered, a 16 MiB file on disk, time-based: fio drops the
           file's cache at every pass and advises FADV_RANDOM, so both read the device
  seed003  seed 003's job file (4 groups, libaio depth 4, O_DIRECT, ramp 1 s, 5 s runs) on a
           1 GiB file: each group's bandwidth within +-5% of fio's; peak RSS <= fio's

Every run holds `flock /tmp/plumb-bench.lock` and runs under /usr/bin/time (user+sys CPU of the
whole process, peak RSS), fio and plumb alternating which goes first. Prints per-round figures,
then medians with [min-max], the ratio of medians plumb/fio, and the median [min-max] of the
per-round ratios (each round's pair back to back: the disk's drift between rounds cancels).

Usage: bench/fio-frontend.py [--rounds N] [--time S] [--dir DIR] [--cases null,shm,...]
       PLUMB=path/to/plumb (default target/release/plumb)
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

LOCK = "/tmp/plumb-bench.lock"

SEED003 = """[global]
filename={file}
direct=1
ioengine=libaio
time_based
runtime={t}
iodepth=4
refill_buffers
group_reporting
wait_for_previous
ramp_time=1
[JOB1]
bs=4k
rw=read
[JOB2]
bs=32k
rw=read
[JOB3]
bs=4k
rw=write
[JOB4]
bs=32k
rw=write
"""


def timed(cmd, cwd):
    """Run cmd under flock and /usr/bin/time: (stdout, cpu seconds, peak RSS KiB)."""
    full = ["flock", LOCK, "/usr/bin/time", "-f", "BENCH_TIME %U %S %M"] + cmd
    p = subprocess.run(full, capture_output=True, text=True, cwd=cwd)
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr}")
    cpu, rss = None, None
    for line in p.stderr.splitlines():
        if line.startswith("BENCH_TIME"):
            _, u, s, m = line.split()
            cpu, rss = float(u) + float(s), int(m)
    return p.stdout, cpu, rss


def job_args(case, t, d, shm):
    base = ["--name=bench", "--rw=randread", "--bs=4k", "--size=1G",
            f"--runtime={t}", "--time_based", "--output-format=json"]
    if case == "null":
        return base + ["--ioengine=null"]
    if case in ("uring", "libaio"):
        eng = "io_uring" if case == "uring" else "libaio"
        return base + [f"--ioengine={eng}", "--iodepth=32", "--direct=1",
                       f"--filename={d}/bench.file"]
    if case == "smallfile":
        return [a for a in base if a != "--size=1G"] + [
            "--size=16m", "--ioengine=psync", f"--filename={d}/small.file"]
    return base + ["--ioengine=psync", f"--filename={shm}/bench.file"]


def measure(tool, case, t, d, shm):
    """One run: dict of figures."""
    if case in ("seed003", "seed003-norefill"):
        path = os.path.join(d, f"{case}.fio")
        text = SEED003.format(file=f"{d}/seed003.img", t=t)
        if case == "seed003-norefill":
            # The same jobs without refill_buffers: fio then spends no CPU making data.
            text = text.replace("refill_buffers\n", "")
        with open(path, "w") as f:
            f.write(text)
        args = ["--output-format=json", path]
    else:
        args = job_args(case, t, d, shm)
    out, cpu, rss = timed(tool + args, d)
    doc = json.loads(out)
    jobs = doc["jobs"]
    if case.startswith("seed003"):
        bw = [j["read"]["bw_bytes"] + j["write"]["bw_bytes"] for j in jobs]
        return {"bw": bw, "rss": rss}
    r = jobs[0]["read"]
    return {"iops": r["iops"], "cpu_per_io_ns": cpu * 1e9 / max(r["total_ios"], 1), "rss": rss}


def summary(vals):
    return statistics.median(vals), min(vals), max(vals)


def paired(res, value):
    """The per-round ratios plumb/fio of `value`, as 'median [min-max]': each round's two runs
    are back to back, so the disk's drift between rounds cancels out of each ratio."""
    r = summary([value(p) / value(f) for f, p in zip(res["fio"], res["plumb"])])
    return f"{r[0]:.3f} [{r[1]:.3f}-{r[2]:.3f}]"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--time", type=int, default=5)
    ap.add_argument("--dir", default="/tmp/plumb-bench-fio")
    ap.add_argument("--shm", default="/dev/shm/plumb-bench-fio")
    ap.add_argument("--cases", default="null,shm,uring,libaio,seed003")
    a = ap.parse_args()
    exe = os.environ.get("PLUMB", "target/release/plumb")
    plumb = [os.path.abspath(exe), "fio", "--plumb-findings=off"]
    fio = ["fio"]
    os.makedirs(a.dir, exist_ok=True)
    os.makedirs(a.shm, exist_ok=True)
    # Lay the files out once, with fio, so neither tool pays for it in a measured round.
    subprocess.run(["fio", "--name=lay", "--rw=write", "--bs=1m", "--size=1G",
                    f"--filename={a.dir}/bench.file"], check=True, capture_output=True)
    subprocess.run(["fio", "--name=lay", "--rw=write", "--bs=1m", "--size=1G",
                    f"--filename={a.shm}/bench.file"], check=True, capture_output=True)
    subprocess.run(["fio", "--name=lay", "--rw=write", "--bs=1m", "--size=1G",
                    f"--filename={a.dir}/seed003.img"], check=True, capture_output=True)
    for case in a.cases.split(","):
        res = {"fio": [], "plumb": []}
        for rnd in range(a.rounds):
            # Who goes first alternates: a drift within a round then favours neither.
            order = (("fio", fio), ("plumb", plumb))
            for name, tool in order if rnd % 2 == 0 else order[::-1]:
                m = measure(tool, case, a.time, a.dir, a.shm)
                res[name].append(m)
                print(f"{case} round {rnd + 1} {name}: {m}", flush=True)
        if case.startswith("seed003"):
            for g in range(4):
                f = summary([m["bw"][g] for m in res["fio"]])
                p = summary([m["bw"][g] for m in res["plumb"]])
                print(f"{case} group {g}: bw fio {f[0] / 2**20:.1f} MiB/s [{f[1] / 2**20:.1f}-{f[2] / 2**20:.1f}], "
                      f"plumb {p[0] / 2**20:.1f} [{p[1] / 2**20:.1f}-{p[2] / 2**20:.1f}], ratio {p[0] / f[0]:.3f}; "
                      f"per-round ratios {paired(res, lambda m, g=g: m['bw'][g])}")
        else:
            f = summary([m["iops"] for m in res["fio"]])
            p = summary([m["iops"] for m in res["plumb"]])
            fc = summary([m["cpu_per_io_ns"] for m in res["fio"]])
            pc = summary([m["cpu_per_io_ns"] for m in res["plumb"]])
            print(f"{case}: IOPS fio {f[0]:.0f} [{f[1]:.0f}-{f[2]:.0f}], plumb {p[0]:.0f} [{p[1]:.0f}-{p[2]:.0f}], "
                  f"ratio {p[0] / f[0]:.2f}; CPU/IO ns fio {fc[0]:.0f}, plumb {pc[0]:.0f}, ratio {pc[0] / fc[0]:.2f}; "
                  f"per-round ratios IOPS {paired(res, lambda m: m['iops'])}, CPU/IO {paired(res, lambda m: m['cpu_per_io_ns'])}")
        fr = summary([m["rss"] for m in res["fio"]])
        pr = summary([m["rss"] for m in res["plumb"]])
        print(f"{case}: peak RSS KiB fio {fr[0]:.0f}, plumb {pr[0]:.0f}, ratio {pr[0] / fr[0]:.2f}")


if __name__ == "__main__":
    main()
