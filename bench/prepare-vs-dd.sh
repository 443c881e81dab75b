#!/usr/bin/env bash
# plumb fileio prepare against dd (bs=1M oflag=direct) writing the same amount to the same
# disk, interleaved. Target (issue 3): prepare reaches at least 90% of dd's throughput.
#
# Usage: bench/prepare-vs-dd.sh [rounds] [dir] [size_mib]   (PLUMB=path)
set -euo pipefail
PLUMB=$(readlink -f "${PLUMB:-target/release/plumb}")
ROUNDS=${1:-3}
DIR=${2:-/tmp/plumb-prepare-bench}
MIB=${3:-2048}
LOCK=/tmp/plumb-bench.lock
mkdir -p "$DIR/plumb" "$DIR/dd"
echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%5s %14s %14s %6s  %s\n" round "dd MiB/s" "plumb MiB/s" ratio load
for ((i = 1; i <= ROUNDS; i++)); do
  dd_run() {
    rm -f "$DIR/dd/f"
    flock "$LOCK" dd if=/dev/zero of="$DIR/dd/f" bs=1M count="$MIB" oflag=direct 2>&1 |
      python3 -c 'import sys,re; t=sys.stdin.read(); m=re.search(r"(\d+) bytes .* copied, ([0-9.]+) s", t); print("%.1f" % (int(m.group(1))/1048576/float(m.group(2))))'
  }
  plumb_run() {
    "$PLUMB" fileio --file-dir="$DIR/plumb" cleanup >/dev/null 2>&1 || true
    flock "$LOCK" "$PLUMB" fileio --file-dir="$DIR/plumb" --file-num=1 --file-total-size="${MIB}M" prepare 2>&1 |
      python3 -c 'import sys,re; t=sys.stdin.read(); m=re.search(r"\(([0-9.]+) MiB/sec\)", t); print(m.group(1))'
  }
  if ((i % 2)); then d=$(dd_run); p=$(plumb_run); else p=$(plumb_run); d=$(dd_run); fi
  printf "%5d %14s %14s %6.2f  %s\n" "$i" "$d" "$p" "$(python3 -c "print($p/$d)")" "$(cut -d' ' -f1 /proc/loadavg)"
done
"$PLUMB" fileio --file-dir="$DIR/plumb" cleanup >/dev/null 2>&1 || true
rm -f "$DIR/dd/f"
