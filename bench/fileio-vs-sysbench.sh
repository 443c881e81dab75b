#!/usr/bin/env bash
# plumb fileio against sysbench 1.0 on the issue's recipes, on the same files, interleaved.
#
# The recipes come from the seed articles (000: the cloud-disk rndrw runs, sync and async;
# 001: the 0.4-syntax runs with --file-fsync-freq=1 and O_DIRECT), unchanged except for the
# run time (--time / --max-time, default 10 s instead of 30-300 s). Each recipe's files are
# prepared once by plumb; sysbench runs on the same files (it needs no manifest). seqwr
# recreates its files, so each tool gets its own directory for it.
#
# Ops/s = (reads + writes + fsyncs) per second as each tool reports them under "File
# operations" (sysbench counts the end-of-run fsyncs there; so does plumb).
#
# Usage: bench/fileio-vs-sysbench.sh [rounds] [dir]   (PLUMB=path, T=seconds)
set -euo pipefail

PLUMB=${PLUMB:-target/release/plumb}
PLUMB=$(readlink -f "$PLUMB")
ROUNDS=${1:-3}
BASE=${2:-/tmp/plumb-vs-sysbench}
T=${T:-10}
LOCK=/tmp/plumb-bench.lock

# name | prepare/run options (sysbench syntax, 1.0 or 0.4) | run-only options
RECIPES=(
  "rndrw-15G|--file-total-size=15G --file-test-mode=rndrw --max-requests=0|--time=$T"
  "rndrw-async-direct|--file-total-size=15G --file-test-mode=rndrw --max-requests=0 --file-io-mode=async --file-extra-flags=direct --file-num=1 --file-rw-ratio=1 --file-fsync-freq=0|--time=$T"
  "rndwr-4K-fsync1-direct|--test=fileio --num-threads=1 --max-requests=0 --file-num=8 --file-total-size=1G --file-test-mode=rndwr --file-block-size=4K --file-fsync-freq=1 --file-extra-flags=direct|--max-time=$T"
  "seqrd-16M-direct|--test=fileio --num-threads=1 --max-requests=0 --file-num=8 --file-total-size=1G --file-test-mode=seqrd --file-block-size=16M --file-fsync-freq=1 --file-extra-flags=direct|--max-time=$T"
  "rndrd-16M-direct|--test=fileio --num-threads=1 --max-requests=0 --file-num=8 --file-total-size=1G --file-test-mode=rndrd --file-block-size=16M --file-fsync-freq=1 --file-extra-flags=direct|--max-time=$T"
  "seqwr-16M-direct|--test=fileio --num-threads=1 --max-requests=0 --file-num=8 --file-total-size=1G --file-test-mode=seqwr --file-block-size=16M --file-fsync-freq=1 --file-extra-flags=direct|--max-time=$T"
)

# "fileio" comes first in 1.0 syntax; 0.4 syntax names the test with --test=.
words() { case "$1" in --test=*) echo "$1";; *) echo "fileio $1";; esac; }

sysbench_ops() { # dir, options...
  local d=$1; shift
  (cd "$d" && flock "$LOCK" sysbench "$@" run 2>/dev/null) | python3 -c '
import sys, re
t = sys.stdin.read()
v = [float(re.search(r"%s:\s+([0-9.]+)" % k, t).group(1)) for k in ("reads/s", "writes/s", "fsyncs/s")]
print("%.2f" % sum(v))'
}

plumb_ops() { # dir, options...
  local d=$1; shift
  flock "$LOCK" "$PLUMB" "$@" --file-dir="$d" --format=json run 2>/dev/null | python3 -c '
import sys, json
v = json.load(sys.stdin)["groups"][0]["jobs"][0]
n = sum(o["count"] for o in v["operations"]) + v["counters"].get("end_fsyncs", 0)
print("%.2f" % (n / v["total_time_s"]))'
}

echo "plumb: $PLUMB"
echo "sysbench: $(sysbench --version)"
echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-24s %5s %12s %12s %6s  %s\n" recipe round sysbench plumb ratio load
for r in "${RECIPES[@]}"; do
  IFS='|' read -r name opts runopts <<<"$r"
  # shellcheck disable=SC2086
  set -- $(words "$opts")
  args=("$@")
  # shellcheck disable=SC2086
  runargs=($runopts)
  d="$BASE/$name"
  mkdir -p "$d" "$d-sysbench"
  if [[ $name != seqwr* ]]; then
    "$PLUMB" "${args[@]}" --file-dir="$d" prepare >/dev/null 2>&1
  fi
  for ((i = 1; i <= ROUNDS; i++)); do
    sd=$d
    [[ $name == seqwr* ]] && sd="$d-sysbench"
    if ((i % 2)); then
      s=$(sysbench_ops "$sd" "${args[@]}" "${runargs[@]}")
      p=$(plumb_ops "$d" "${args[@]}" "${runargs[@]}")
    else
      p=$(plumb_ops "$d" "${args[@]}" "${runargs[@]}")
      s=$(sysbench_ops "$sd" "${args[@]}" "${runargs[@]}")
    fi
    printf "%-24s %5d %12s %12s %6.2f  %s\n" "$name" "$i" "$s" "$p" \
      "$(python3 -c "print($p / $s)")" "$(cut -d' ' -f1 /proc/loadavg)"
  done
done
echo "Clean up with: $PLUMB fileio --file-dir=DIR cleanup for each directory under $BASE (and rm -r ${BASE}/*-sysbench)"
