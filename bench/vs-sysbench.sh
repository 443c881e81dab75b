#!/usr/bin/env bash
# plumb against sysbench 1.0 on the same machine, same options, interleaved.
#
# For every case, each round runs sysbench and plumb back to back (the order alternates
# between rounds) under `flock /tmp/plumb-bench.lock`, so other measurements on the machine
# wait. Both tools' text reports are parsed. The table gives the median of the rounds for
# each tool and the ratio plumb / sysbench of the throughput (events/s, MiB/s, or for the
# fixed-work threads and mutex cases events / total time): above 1 means plumb did more.
#
# Usage: bench/vs-sysbench.sh [-r ROUNDS] [-t SECONDS] [-p PATH/TO/PLUMB] [CASE...]
#   ROUNDS   rounds per case (default 3)
#   SECONDS  --time for the time-limited cases (default 10)
#   CASE     case names to run (default: all; see `bench/vs-sysbench.sh -l`)
set -euo pipefail

ROUNDS=3
TIME=10
PLUMB=target/release/plumb
LIST=0
while getopts "r:t:p:l" o; do
  case $o in
    r) ROUNDS=$OPTARG ;;
    t) TIME=$OPTARG ;;
    p) PLUMB=$OPTARG ;;
    l) LIST=1 ;;
    *) sed -n '2,16p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))

# name | metric | options (identical for both tools)
CASES=(
  "cpu-t1|eps|cpu --cpu-max-prime=20000 --threads=1 --time=$TIME"
  "cpu-t2|eps|cpu --cpu-max-prime=20000 --threads=2 --time=$TIME"
  "mem-1K-write|mibs|memory --memory-block-size=1K --memory-oper=write --time=$TIME"
  "mem-1K-read|mibs|memory --memory-block-size=1K --memory-oper=read --time=$TIME"
  "mem-8K-write|mibs|memory --memory-block-size=8K --memory-oper=write --time=$TIME"
  "mem-8K-read|mibs|memory --memory-block-size=8K --memory-oper=read --time=$TIME"
  "mem-1M-write|mibs|memory --memory-block-size=1M --memory-oper=write --time=$TIME"
  "mem-1M-read|mibs|memory --memory-block-size=1M --memory-oper=read --time=$TIME"
  "mem-1K-rnd-read|mibs|memory --memory-block-size=1K --memory-access-mode=rnd --memory-oper=read --time=$TIME"
  "threads-t64|fixed|threads --threads=64 --thread-yields=1000 --thread-locks=8 --events=2000 --time=0"
  "threads-t4|fixed|threads --threads=4 --thread-yields=1000 --thread-locks=8 --events=4000 --time=0"
  "mutex-t2|fixed|mutex --threads=2 --mutex-locks=500000"
  "mutex-t8|fixed|mutex --threads=8 --mutex-locks=100000"
)

if [ "$LIST" = 1 ]; then
  for c in "${CASES[@]}"; do echo "${c%%|*}: ${c##*|}"; done
  exit 0
fi
command -v sysbench >/dev/null || { echo "vs-sysbench: sysbench not found" >&2; exit 2; }
[ -x "$PLUMB" ] || { echo "vs-sysbench: no plumb at $PLUMB (cargo build --release)" >&2; exit 2; }

# metric value from a text report
parse() { # metric file
  case $1 in
    eps) awk '/events per second:/ { print $4 }' "$2" ;;
    mibs) sed -n 's/.*MiB transferred (\([0-9.]*\) MiB\/sec).*/\1/p' "$2" ;;
    fixed) awk '/total time:/ { t = $3; sub("s", "", t) } /total number of events:/ { e = $5 }
                END { if (t > 0) printf "%.4f\n", e / t }' "$2" ;;
  esac
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

tmp=$(mktemp -d /tmp/plumb-vs-sysbench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

echo "# $(date -Is) host=$(hostname) nproc=$(nproc) cpu='$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')'"
echo "# sysbench: $(sysbench --version)  plumb: $("$PLUMB" version) ($PLUMB)"
echo "# rounds=$ROUNDS time=$TIME  load at start: $(cut -d' ' -f1-3 /proc/loadavg)"

selected() { # name [wanted...]: no wanted names means every case
  local n=$1; shift
  [ $# -eq 0 ] && return 0
  for want in "$@"; do [ "$want" = "$n" ] && return 0; done
  return 1
}

results=()
for c in "${CASES[@]}"; do
  IFS='|' read -r name metric opts <<<"$c"
  selected "$name" "$@" || continue
  : >"$tmp/$name.sysbench"; : >"$tmp/$name.plumb"
  for r in $(seq 1 "$ROUNDS"); do
    if [ $((r % 2)) = 1 ]; then order="sysbench plumb"; else order="plumb sysbench"; fi
    # One lock for the pair: both tools see the same conditions.
    # shellcheck disable=SC2086
    flock /tmp/plumb-bench.lock bash -c '
      for tool in '"$order"'; do
        if [ "$tool" = sysbench ]; then bin=sysbench; else bin='"$PLUMB"'; fi
        "$bin" '"$opts"' run >"'"$tmp"'/out.$tool" 2>"'"$tmp"'/err.$tool" || {
          echo "$tool failed on: '"$opts"'" >&2; cat "'"$tmp"'/err.$tool" >&2; exit 1; }
      done'
    for tool in sysbench plumb; do
      v=$(parse "$metric" "$tmp/out.$tool")
      [ -n "$v" ] || { echo "could not parse $tool output for $name" >&2; cat "$tmp/out.$tool" >&2; exit 1; }
      echo "$v" >>"$tmp/$name.$tool"
    done
    echo "#   $name round $r: sysbench $(tail -1 "$tmp/$name.sysbench")  plumb $(tail -1 "$tmp/$name.plumb")  load $(cut -d' ' -f1 /proc/loadavg)" >&2
  done
  sb=$(median <"$tmp/$name.sysbench")
  pl=$(median <"$tmp/$name.plumb")
  ratio=$(awk -v a="$pl" -v b="$sb" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "n/a" }')
  range() { sort -g "$1" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s..%s", lo, hi }'; }
  unit=$metric
  case $metric in eps) unit="events/s" ;; mibs) unit="MiB/s" ;; fixed) unit="events/s (fixed work)" ;; esac
  results+=("$(printf '| %-16s | %-22s | %12s | %12s | %6s | %s | %s |' "$name" "$unit" "$sb" "$pl" "$ratio" "$(range "$tmp/$name.sysbench")" "$(range "$tmp/$name.plumb")")")
done

echo "# load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
printf '| %-16s | %-22s | %12s | %12s | %6s | %s | %s |\n' case metric "sysbench" "plumb" ratio "sysbench range" "plumb range"
echo "|---|---|---:|---:|---:|---|---|"
printf '%s\n' "${results[@]}"
