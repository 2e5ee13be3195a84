#!/bin/sh
# view_bench.sh -- time to the first screen of `dynrec view` on a 1M-event trace.
# The trace is built as open_bench.sh builds it: a recording of
# examples/shape_recompiles.py grown to N events by bench/diff_big.py (a
# recompile storm: ~45k recompiles and ~90k guard failures in one frame).
# `dynrec view --dump-first-screen` opens the trace, runs the queries of the
# first screen (recompiles) and prints it as text, as the viewer would draw
# it; the figure is the median wall time of RUNS runs, process start to exit.
# Also timed: the first screen of the other list screens.  Goal: under 0.5 s.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
PY=${PYTHON:-.venv/bin/python}
N=${N:-1000000}
RUNS=${RUNS:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp examples/shape_recompiles.py "$tmp/"
(cd "$tmp" && "$OLDPWD/$BUILD/dynrec" run -q -o a.db shape_recompiles.py >/dev/null)
"$PY" bench/diff_big.py "$tmp/a.db" "$tmp/big.db" "$N" >/dev/null
echo "trace of $N events: $(stat -c %s "$tmp/big.db") bytes"
median() {
    # median wall time in seconds of RUNS runs of: dynrec view --dump-first-screen "$@"
    i=0
    : > "$tmp/times"
    while [ $i -lt "$RUNS" ]; do
        s=$(date +%s%N)
        "$BUILD/dynrec" view --dump-first-screen "$@" "$tmp/big.db" > "$tmp/screen.txt"
        e=$(date +%s%N)
        echo $(( (e - s) / 1000 )) >> "$tmp/times"
        i=$((i + 1))
    done
    sort -n "$tmp/times" | awk '{a[NR] = $1} END {printf "%.3f s\n", a[int((NR + 1) / 2)] / 1e6}'
}
printf "  first screen (recompiles)   %s\n" "$(median)"
for s in frames compiles breaks errors graphs speculation; do
    printf "  --screen %-18s %s\n" "$s" "$(median --screen "$s")"
done
echo "the first screen:"
"$BUILD/dynrec" view --dump-first-screen "$tmp/big.db" | head -8
