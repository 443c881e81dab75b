#!/usr/bin/env bash
# Resident memory of a long, many-threaded plumb run: does it grow while the run goes on?
#
# Runs `plumb cpu` (64 threads, 600 s, an interval line every 10 s by default) and samples
# VmRSS and VmHWM from /proc/PID/status every SAMPLE seconds. Prints one line per sample and,
# at the end, the first and last RSS and their difference.
#
# Usage: bench/rss-soak.sh [path/to/plumb] [threads] [seconds] [sample-seconds]
# Env:   NICE=19 (default) runs plumb under `nice -n $NICE` so it disturbs other work less.
set -euo pipefail

PLUMB=${1:-target/release/plumb}
THREADS=${2:-64}
SECONDS_TOTAL=${3:-600}
SAMPLE=${4:-10}
NICE=${NICE:-19}

[ -x "$PLUMB" ] || { echo "rss-soak: no executable plumb at $PLUMB (cargo build --release)" >&2; exit 2; }

out=$(mktemp -d /tmp/plumb-rss-soak.XXXXXX)
echo "# plumb: $PLUMB" 
echo "# command: nice -n $NICE $PLUMB cpu --threads=$THREADS --time=$SECONDS_TOTAL --report-interval=10 run"
echo "# machine: nproc=$(nproc) cpu='$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')'"
echo "# start: $(date -Is) load: $(cut -d' ' -f1-3 /proc/loadavg)"
nice -n "$NICE" "$PLUMB" cpu --threads="$THREADS" --time="$SECONDS_TOTAL" --report-interval=10 run \
  >"$out/report.txt" 2>"$out/stderr.txt" &
pid=$!

field() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$pid/status" 2>/dev/null || true; }

first=""
last=""
t0=$(date +%s)
printf '%8s %12s %12s %8s\n' elapsed_s rss_kib hwm_kib threads
# The first sample comes one second in, once the workers exist; then every SAMPLE seconds.
sleep 1
while kill -0 "$pid" 2>/dev/null; do
  rss=$(field VmRSS)
  hwm=$(field VmHWM)
  thr=$(field Threads)
  [ -n "$rss" ] || break
  now=$(( $(date +%s) - t0 ))
  printf '%8s %12s %12s %8s\n' "$now" "$rss" "$hwm" "$thr"
  [ -n "$first" ] || first=$rss
  last=$rss
  sleep "$SAMPLE"
done
wait "$pid" && rc=0 || rc=$?
echo "# end: $(date -Is) load: $(cut -d' ' -f1-3 /proc/loadavg) exit: $rc"
echo "# rss start: ${first} KiB  rss end: ${last} KiB  growth: $(( ${last:-0} - ${first:-0} )) KiB"
echo "# report tail:"
tail -n 22 "$out/report.txt" | sed 's/^/#   /'
rm -rf "$out"
