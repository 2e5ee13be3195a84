#!/bin/sh
# gc_clock.sh -- whether recording moves the program's garbage collections.
#
# CPython's cyclic collector runs when the allocations of tracked objects
# pass a threshold, and a full collection (every object: ~330k of them once
# torch and a model are loaded, 100-150 ms) when enough objects have
# survived into the oldest generation.  What the recorder allocates, and the
# structured-trace records torch builds only because dynrec listens, would
# bring those collections forward; recorder/pycompat.c holds the collector
# while dynrec's own work runs so that they come when they would without
# dynrec.  This runs SCRIPT (default bench/compile_heavy.py) RUNS times
# (default 3) under plain python, `dynrec run` and TORCH_TRACE, counting the
# collections of each generation (gc.callbacks) and timing the full ones.
# Counts are exact and repeat; the times are wall seconds.
set -eu
cd "$(dirname "$0")/.."
PY=${PY:-$PWD/.venv/bin/python}
DYNREC=${DYNREC:-$PWD/build/dynrec}
RUNS=${RUNS:-3}
SCRIPT=${SCRIPT:-bench/compile_heavy.py}
OUT=${OUT:-$PWD/bench/out}
mkdir -p "$OUT"
wrap="$OUT/gc_clock_wrap.py"
cat >"$wrap" <<'EOF'
import atexit, gc, runpy, sys, time

runs, full, start = [0, 0, 0], [], [0.0]


def count(phase, info):
    if phase == "start":
        runs[info["generation"]] += 1
        start[0] = time.perf_counter()
    elif info["generation"] == 2:
        full.append(time.perf_counter() - start[0])


gc.callbacks.append(count)
atexit.register(lambda: sys.stderr.write(
    "gc_clock: %d %d %d %.1f\n" % (runs[0], runs[1], runs[2], 1e3 * sum(full))))
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
EOF
one() { # label, command...
    label=$1; shift
    "$@" "$wrap" "$SCRIPT" 2>&1 >/dev/null | sed -n "s/^gc_clock: /$label /p"
}
echo "bench/gc_clock.sh: collections of generations 0, 1 and 2, and the full ones' time (ms), of $SCRIPT"
for i in $(seq "$RUNS"); do
    one python "$PY"
    one dynrec "$DYNREC" run -q -o "$OUT/gc_clock.db"
    rm -rf "$OUT/gc_clock_trace"
    one torch_trace env TORCH_TRACE="$OUT/gc_clock_trace" "$PY"
done | awk '{printf "  %-12s %5d %4d %3d   %7.1f ms\n", $1, $2, $3, $4, $5}'
