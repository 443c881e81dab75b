#!/usr/bin/env python3
"""plumb's OLTP tests against Debian's sysbench 1.0.20 on the same server and options,
interleaved, in rounds (issue 9's targets).

Cases:
  my-ps, my-ro   oltp_point_select / oltp_read_only, 2 threads, on MariaDB (socket)
  my-ps-tcp      the same point selects over TCP (127.0.0.1)
  pg-ps, pg-ro   the same on PostgreSQL (127.0.0.1): TLS for both, as libpq's default
                 sslmode=prefer encrypts sysbench's connections and plumb negotiates as libpq
  pg-ps-plain, pg-ro-plain   the same in plain text (PGSSLMODE=disable for sysbench's libpq,
                 --pgsql-sslmode=disable for plumb)
      targets: plumb tps >= 1.0x sysbench's; client CPU per transaction <= 0.7x
  my-prepare     prepare of 8 tables x 100 000 rows, 1 thread      target: rows/s >= sysbench's
  sqlite-ps      plumb only: oltp_point_select, 1 thread, on SQLite (tps and CPU/transaction)
  dry-ps, dry-rw, dry-rw-text   --mysql-dry-run, 1 thread, no server: oltp_point_select,
                 oltp_read_write, and oltp_read_write with --db-ps-mode=disable: the client's
                 own cost per transaction, nothing sent

Rounds alternate which tool runs first. Both tools get the same arguments (plumb adds --plumb-findings=off only under its own name:
none here, it runs as `plumb`). Each run holds `flock /tmp/plumb-bench.lock` and runs under
/usr/bin/time (user+sys CPU of the client process, and user alone). Prints per-round figures, then medians
with [min-max] and the ratio of medians plumb/sysbench.

Usage: bench/oltp-vs-sysbench.py [--rounds N] [--time S] [--cases my-ps,my-ro,...]
       PLUMB=path/to/plumb (default target/release/plumb)
Needs: MariaDB with root on the socket, PostgreSQL trusting postgres on 127.0.0.1, and the
databases plumb_bench (created here).
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

LOCK = "/tmp/plumb-bench.lock"
DB = "plumb_bench"
MY = ["--mysql-user=root", f"--mysql-db={DB}"]
MY_TCP = MY + ["--mysql-host=127.0.0.1"]
PG = ["--db-driver=pgsql", "--pgsql-user=postgres", "--pgsql-host=127.0.0.1", f"--pgsql-db={DB}"]


def timed(cmd, cwd, env=None, split=False):
    """Run cmd under flock and /usr/bin/time: (stdout, elapsed s, cpu s); with split,
    cpu is (user s, system s)."""
    full = ["flock", LOCK, "/usr/bin/time", "-f", "BENCH_TIME %e %U %S"] + cmd
    p = subprocess.run(full, capture_output=True, text=True, cwd=cwd, env=env)
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stdout}\n{p.stderr}")
    for line in p.stderr.splitlines():
        if line.startswith("BENCH_TIME"):
            _, e, u, s = line.split()
            if split:
                return p.stdout, float(e), (float(u), float(s))
            return p.stdout, float(e), float(u) + float(s)
    sys.exit("no timing line")


def figure(out, label):
    m = re.search(rf"^\s*{re.escape(label)}\s+(\d+)", out, re.M)
    return int(m.group(1)) if m else None


def setup_databases():
    subprocess.run(["mariadb", "-uroot", "-e", f"CREATE DATABASE IF NOT EXISTS {DB}"], check=True)
    r = subprocess.run(["psql", "-U", "postgres", "-h", "127.0.0.1", "-Atc",
                        f"SELECT 1 FROM pg_database WHERE datname = '{DB}'"],
                       capture_output=True, text=True, check=True)
    if r.stdout.strip() != "1":
        subprocess.run(["psql", "-U", "postgres", "-h", "127.0.0.1", "-c",
                        f"CREATE DATABASE {DB}"], check=True, capture_output=True)


def run_case(tool, case, t, cwd, plumb):
    exe = [plumb] if tool == "plumb" else ["sysbench"]
    if case == "my-prepare":
        opts = MY + ["oltp_read_write", "--tables=8", "--table-size=100000"]
        subprocess.run(exe + opts + ["cleanup"], capture_output=True, cwd=cwd)
        _, elapsed, cpu = timed(exe + opts + ["prepare"], cwd)
        subprocess.run(exe + opts + ["cleanup"], capture_output=True, cwd=cwd)
        return {"rows_per_s": 800000 / elapsed, "cpu_s": cpu}
    test = "oltp_point_select" if "-ps" in case else "oltp_read_only"

    if case.startswith("sqlite"):
        opts = ["oltp_point_select", "--sqlite-db=bench.db", "--table-size=100000", "--threads=1"]
    elif case.startswith("dry"):
        test = "oltp_point_select" if case == "dry-ps" else "oltp_read_write"
        opts = ["--db-driver=mysql", "--mysql-dry-run", test, "--threads=1"]
        if case.endswith("-text"):
            opts.append("--db-ps-mode=disable")
    else:
        server = MY_TCP if case.endswith("-tcp") else MY if case.startswith("my") else PG
        opts = server + [test, "--tables=4", "--table-size=100000", "--threads=2"]
    env = None
    if case.endswith("-plain"):
        if tool == "plumb":
            opts = opts + ["--pgsql-sslmode=disable"]
        else:
            env = dict(os.environ, PGSSLMODE="disable")
    out, elapsed, (usr, sys_) = timed(exe + opts + [f"--time={t}", "run"], cwd, env, split=True)
    trx = figure(out, "transactions:")
    secs = float(re.search(r"total time:\s+([\d.]+)s", out).group(1))
    # The user-space part apart: the client's own code, where the kernel's per-statement
    # send, wakeup and switch (paid alike by both clients) are not.
    return {"tps": trx / secs, "cpu_per_trx_us": (usr + sys_) * 1e6 / max(trx, 1),
            "user_cpu_per_trx_us": usr * 1e6 / max(trx, 1)}


def prepare_data(case, cwd, plumb):
    if case.startswith("sqlite"):
        subprocess.run([plumb, "oltp_point_select", "--sqlite-db=bench.db", "--table-size=100000",
                        "prepare"], check=True, capture_output=True, cwd=cwd)
    elif case != "my-prepare" and not case.startswith("dry"):
        # The same tables for both tools, made once (sysbench's own prepare).
        opts = (MY if case.startswith("my") else PG) + ["oltp_read_only", "--tables=4", "--table-size=100000"]
        subprocess.run(["sysbench"] + opts + ["cleanup"], capture_output=True, cwd=cwd)
        subprocess.run(["sysbench"] + opts + ["prepare"], check=True, capture_output=True, cwd=cwd)


def summary(vals):
    return statistics.median(vals), min(vals), max(vals)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--time", type=int, default=10)
    ap.add_argument("--cases", default="my-ps,my-ro,pg-ps,pg-ro,my-prepare,sqlite-ps")
    a = ap.parse_args()
    plumb = os.path.abspath(os.environ.get("PLUMB", "target/release/plumb"))
    setup_databases()
    cwd = tempfile.mkdtemp(prefix="plumb-bench-oltp-")
    for case in a.cases.split(","):
        prepare_data(case, cwd, plumb)
        tools = ["plumb"] if case.startswith("sqlite") else ["sysbench", "plumb"]
        res = {t: [] for t in tools}
        for rnd in range(a.rounds):
            # Alternate which tool goes first: a server that drifts (purge, caches warming)
            # would otherwise favour one seat.
            for tool in (tools if rnd % 2 == 0 else tools[::-1]):
                m = run_case(tool, case, a.time, cwd, plumb)
                res[tool].append(m)
                print(f"{case} round {rnd + 1} {tool}: {m}", flush=True)
        keys = res[tools[0]][0].keys()
        for k in keys:
            line = [f"{case} {k}:"]
            for tool in tools:
                v = summary([m[k] for m in res[tool]])
                line.append(f"{tool} {v[0]:.1f} [{v[1]:.1f}-{v[2]:.1f}]")
            if len(tools) == 2:
                s = statistics.median([m[k] for m in res["sysbench"]])
                p = statistics.median([m[k] for m in res["plumb"]])
                # Each round's two runs are back to back: the server's drift cancels.
                rv = [x[k] / y[k] for x, y in zip(res["plumb"], res["sysbench"])]
                line.append(f"ratio plumb/sysbench {p / s:.2f}  per-round ratios "
                            f"{statistics.median(rv):.3f} [{min(rv):.3f}-{max(rv):.3f}]")
            print(" ".join(line), flush=True)


if __name__ == "__main__":
    main()
