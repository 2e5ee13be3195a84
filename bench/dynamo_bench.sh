#!/bin/sh
# dynamo_bench.sh -- what recording Dynamo costs: wall-time ratios against plain python.
#
#   (a) bench/compile_heavy.py: several small models, recompiles, graph breaks
#   (b) bench/hot_loop.py: 10^6 calls of one compiled function (cache hits)
# Each is run RUNS times (default 5), interleaved: python, dynrec run, and for
# (a) also TORCH_TRACE=dir python and dynrec run without the capture of frame
# inputs for replay (DYNREC_FAULT_HOOK=capture switches that hook off at its
# first call).  Prints medians, ratios, the sizes of the dynrec trace and of
# the TORCH_TRACE log directory for (a), and the capture's share of the trace.
set -eu
cd "$(dirname "$0")/.."
PY=${PY:-$PWD/.venv/bin/python}
DYNREC=${DYNREC:-$PWD/build/dynrec}
RUNS=${RUNS:-5}
N=${N:-1000000}
OUT=${OUT:-$PWD/bench/out}
mkdir -p "$OUT"
rm -f "$OUT"/dyn-*.txt

wall() { # label, command...
    label=$1; shift
    t0=$(date +%s.%N)
    "$@" >/dev/null
    t1=$(date +%s.%N)
    echo "$t0 $t1" | awk '{print $2-$1}' >>"$OUT/dyn-$label.txt"
}
for i in $(seq "$RUNS"); do
    wall a-python $PY bench/compile_heavy.py
    wall a-dynrec $DYNREC run -q -o "$OUT/compile_heavy.db" bench/compile_heavy.py
    DYNREC_FAULT_HOOK=capture wall a-nocapture $DYNREC run -q -o "$OUT/compile_heavy-nocapture.db" \
        bench/compile_heavy.py
    rm -rf "$OUT/torch_trace"
    TORCH_TRACE="$OUT/torch_trace" wall a-torch_trace $PY bench/compile_heavy.py
    wall b-python $PY bench/hot_loop.py "$N"
    wall b-dynrec $DYNREC run -q -o "$OUT/hot_loop.db" bench/hot_loop.py "$N"
done

median() { sort -g "$1" | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
ap=$(median "$OUT/dyn-a-python.txt"); ad=$(median "$OUT/dyn-a-dynrec.txt")
at=$(median "$OUT/dyn-a-torch_trace.txt"); an=$(median "$OUT/dyn-a-nocapture.txt")
bp=$(median "$OUT/dyn-b-python.txt"); bd=$(median "$OUT/dyn-b-dynrec.txt")
echo "bench/dynamo_bench.sh: medians of $RUNS interleaved runs (wall seconds)"
echo "$ad $ap" | awk '{printf "  (a) compile-heavy  dynrec run %.3f / python %.3f = %.3f\n", $1, $2, $1/$2}'
echo "$an $ap" | awk '{printf "  (a) compile-heavy  dynrec run without capture %.3f / python %.3f = %.3f\n", $1, $2, $1/$2}'
echo "$at $ap" | awk '{printf "  (a) compile-heavy  TORCH_TRACE python %.3f / python %.3f = %.3f\n", $1, $2, $1/$2}'
echo "$bd $bp $N" | awk '{printf "  (b) hot loop, %d calls  dynrec run %.3f / python %.3f = %.3f\n", $3, $1, $2, $1/$2}'
db=$(stat -c %s "$OUT/compile_heavy.db")
tt=$(du -sb "$OUT/torch_trace" | cut -f1)
echo "  (a) sizes: dynrec trace $db bytes, TORCH_TRACE directory $tt bytes"
dn=$(stat -c %s "$OUT/compile_heavy-nocapture.db")
echo "$db $dn" | awk '{printf "  (a) capture of frame inputs: %d bytes of the trace (%.1f%%; trace without it %d bytes)\n", $1-$2, 100*($1-$2)/$1, $2}'
