#!/bin/sh
# open_bench.sh -- opening a trace of 1M events, and `dynrec show` on it.
# A recording of examples/shape_recompiles.py is grown to 1M events by
# bench/diff_big.py (its compile-level events repeated under fresh compile
# ids: a recompile storm); build/open_bench times dr_trace_open alone and
# open + show, medians of 5 runs.  Goals: open under 0.5 s, show under 1 s.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
PY=${PYTHON:-.venv/bin/python}
N=${N:-1000000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp examples/shape_recompiles.py "$tmp/"
(cd "$tmp" && "$OLDPWD/$BUILD/dynrec" run -q -o a.db shape_recompiles.py >/dev/null)
"$PY" bench/diff_big.py "$tmp/a.db" "$tmp/big.db" "$N" >/dev/null
echo "trace of $N events: $(stat -c %s "$tmp/big.db") bytes"
"$BUILD/open_bench" "$tmp/big.db" 5
