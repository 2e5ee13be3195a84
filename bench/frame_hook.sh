#!/bin/sh
# frame_hook.sh -- what dynrec's PEP 523 frame hook costs per Python call.
#
# Runs bench/calls.py (10^7 calls to a trivial function) interleaved under:
#   python        plain python of the venv
#   run           dynrec run, default mode (no torch.compile: hook never installed)
#   passthrough   dynrec run --all-frames with counting off (DYNREC_BENCH_NOCOUNT=1):
#                 the cost of having any frame-evaluation function installed
#   all-frames    dynrec run --all-frames: the hook installed and counting
# and prints the median loop time of each, the added ns per call against
# plain python, and the whole-process wall-time ratio of `run` to python.
set -eu
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
DYNREC=${DYNREC:-build/dynrec}
RUNS=${RUNS:-7}
N=${N:-10000000}
OUT=${OUT:-bench/out}
mkdir -p "$OUT"
rm -f "$OUT"/hook-*.txt
trace="$OUT/hook.db"

now() { date +%s.%N; }
for i in $(seq "$RUNS"); do
    t0=$(now); $PY bench/calls.py "$N" >>"$OUT/hook-python.txt"; t1=$(now)
    echo "$t0 $t1" | awk '{print $2-$1}' >>"$OUT/hook-python-wall.txt"
    t0=$(now); $DYNREC run -q -o "$trace" bench/calls.py "$N" >>"$OUT/hook-run.txt"; t1=$(now)
    echo "$t0 $t1" | awk '{print $2-$1}' >>"$OUT/hook-run-wall.txt"
    DYNREC_BENCH_NOCOUNT=1 $DYNREC run -q --all-frames -o "$trace" bench/calls.py "$N" >>"$OUT/hook-passthrough.txt"
    $DYNREC run -q --all-frames -o "$trace" bench/calls.py "$N" >>"$OUT/hook-all-frames.txt"
done

median() { sort -g "$1" | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
base=$(median "$OUT/hook-python.txt")
echo "bench/frame_hook.sh: $N calls, median of $RUNS interleaved runs"
for mode in python run passthrough all-frames; do
    m=$(median "$OUT/hook-$mode.txt")
    echo "$mode $m $base $N" | awk '{printf "  %-12s loop %.3f s  %6.2f ns/call  added %+6.2f ns/call\n", $1, $2, $2/$4*1e9, ($2-$3)/$4*1e9}'
done
pw=$(median "$OUT/hook-python-wall.txt")
rw=$(median "$OUT/hook-run-wall.txt")
echo "$rw $pw" | awk '{printf "  wall time dynrec run / python (default mode): %.3f (%.3f s / %.3f s)\n", $1/$2, $1, $2}'
