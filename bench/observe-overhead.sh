#!/usr/bin/env bash
# Cost of observation: the same fileio run with the samplers on (--observe-interval=1, the
# default) and off (--observe-interval=0: start and end facts only), interleaved, several
# rounds. Prints ops/s of each run and the on/off ratio of the means. Target: within 1%.
#
# Usage: bench/observe-overhead.sh [rounds] [dir]   (PLUMB=path, T=seconds, MODE=rndrd,
#        FLAGS=direct; FLAGS= for buffered I/O, e.g. on /dev/shm where a run is CPU-bound and
#        steady enough to show a 1% difference, which a virtual disk's noise hides)
set -euo pipefail

PLUMB=$(readlink -f "${PLUMB:-target/release/plumb}")
ROUNDS=${1:-5}
DIR=${2:-/tmp/plumb-observe-overhead}
T=${T:-10}
MODE=${MODE:-rndrd}
FLAGS=${FLAGS-direct}
OPTS=(fileio --file-num=1 --file-total-size=1G --file-block-size=4K --file-test-mode="$MODE"
      --file-extra-flags="$FLAGS" --file-fsync-freq=0)

mkdir -p "$DIR"
cd "$DIR"
"$PLUMB" "${OPTS[@]}" prepare >/dev/null

ops() { # observe-interval
  flock /tmp/plumb-bench.lock "$PLUMB" "${OPTS[@]}" --time="$T" --observe-interval="$1" \
    --format=json run 2>/dev/null |
    python3 -c 'import json,sys; d=json.load(sys.stdin)["groups"][0]["jobs"][0]; print("%.1f" % d["events_per_s"])'
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
on=(); off=()
for r in $(seq "$ROUNDS"); do
  a=$(ops 1); b=$(ops 0)
  on+=("$a"); off+=("$b")
  echo "round $r: observed $a ops/s, not observed $b ops/s"
done
python3 - "${on[*]}" "${off[*]}" <<'PY'
import sys, statistics as st
on = [float(x) for x in sys.argv[1].split()]
off = [float(x) for x in sys.argv[2].split()]
print("observed:     mean %.1f  stdev %.1f" % (st.mean(on), st.pstdev(on)))
print("not observed: mean %.1f  stdev %.1f" % (st.mean(off), st.pstdev(off)))
print("ratio observed/not observed: %.4f" % (st.mean(on) / st.mean(off)))
PY
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
"$PLUMB" "${OPTS[@]}" cleanup >/dev/null
