#!/usr/bin/env python3
"""plumb mysqlslap against MariaDB's mariadb-slap on seed 004's first command (issue 9's
target: plumb's wall time <= mariadb-slap's), interleaved, the order alternating each round,
each run holding `flock /tmp/plumb-bench.lock` under /usr/bin/time. Prints per-round wall
and client CPU times, then medians with [min-max] and the ratios plumb/mariadb-slap, of the
whole run's wall time and of the per-group times both print ("Average number of seconds to
run all queries").

Usage: bench/mysqlslap-vs-mariadb-slap.py [--rounds N]     PLUMB=path/to/plumb
Needs: MariaDB with root on its socket, mariadb-slap (Debian's mariadb-client).
"""

import argparse
import os
import re
import statistics
import subprocess
import sys

LOCK = "/tmp/plumb-bench.lock"
SEED004 = [
    "-uroot", "--engine=innodb", "--auto-generate-sql",
    "--auto-generate-sql-unique-query-number=100",
    "--auto-generate-sql-unique-write-number=100",
    "--auto-generate-sql-write-number=1000", "--create-schema=slap_bench",
    "--auto-generate-sql-load-type=mixed", "--concurrency=10,100",
    "--number-of-queries=1000", "--iterations=1", "--number-char-cols=1",
    "--number-int-cols=8", "--auto-generate-sql-secondary-indexes=1",
]


def run(cmd):
    full = ["flock", LOCK, "/usr/bin/time", "-f", "BENCH_TIME %e %U %S"] + cmd
    p = subprocess.run(full, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stdout}\n{p.stderr}")
    wall = cpu = None
    for line in p.stderr.splitlines():
        if line.startswith("BENCH_TIME"):
            _, e, u, s = line.split()
            wall, cpu = float(e), float(u) + float(s)
    groups = [float(x) for x in
              re.findall(r"Average number of seconds to run all queries: ([0-9.]+)", p.stdout)]
    return wall, cpu, groups


def summary(vals):
    return statistics.median(vals), min(vals), max(vals)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=6)
    a = ap.parse_args()
    plumb = os.environ.get("PLUMB", "target/release/plumb")
    tools = {
        "mariadb-slap": ["mariadb-slap"] + SEED004,
        "plumb": [plumb, "mysqlslap", "--no-history"] + SEED004,
    }
    res = {t: {"wall": [], "cpu": [], "groups": []} for t in tools}
    for r in range(a.rounds):
        order = list(tools) if r % 2 == 0 else list(reversed(tools))
        for t in order:
            wall, cpu, groups = run(tools[t])
            res[t]["wall"].append(wall)
            res[t]["cpu"].append(cpu)
            res[t]["groups"].append(groups)
            print(f"round {r + 1} {t:12} wall {wall:.2f} s  cpu {cpu:.2f} s  groups {groups}")
    for k in ("wall", "cpu"):
        m = {t: summary(res[t][k]) for t in tools}
        print(f"{k}: mariadb-slap {m['mariadb-slap'][0]:.2f} [{m['mariadb-slap'][1]:.2f}-"
              f"{m['mariadb-slap'][2]:.2f}] plumb {m['plumb'][0]:.2f} [{m['plumb'][1]:.2f}-"
              f"{m['plumb'][2]:.2f}] ratio {m['plumb'][0] / m['mariadb-slap'][0]:.2f}")
    n = min(len(g) for t in tools for g in res[t]["groups"])
    for i in range(n):
        m = {t: summary([g[i] for g in res[t]["groups"]]) for t in tools}
        print(f"group {i + 1} timed part: mariadb-slap {m['mariadb-slap'][0]:.3f} plumb "
              f"{m['plumb'][0]:.3f} ratio {m['plumb'][0] / m['mariadb-slap'][0]:.2f}")


if __name__ == "__main__":
    main()
