#!/bin/sh
# diff_bench.sh -- wall time of `dynrec diff`: two recordings of an example,
# and two traces grown to 100k events each (bench/diff_big.py).  Median of
# 5 runs each; the goals are under 50 ms and under 1 s.
set -eu
cd "$(dirname "$0")/.."
BIN=${DYNREC_BIN:-build/dynrec}
PY=${PYTHON:-.venv/bin/python}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp examples/shape_recompiles.py "$tmp/"
(cd "$tmp" && "$OLDPWD/$BIN" run -q -o a.db shape_recompiles.py >/dev/null &&
    "$OLDPWD/$BIN" run -q -o b.db shape_recompiles.py >/dev/null)

median_ms() { # command... ; prints the median wall time of 5 runs in ms
    for i in 1 2 3 4 5; do
        s=$(date +%s%N)
        "$@" >/dev/null || [ $? -eq 1 ]
        e=$(date +%s%N)
        echo $(( (e - s) / 1000000 ))
    done | sort -n | sed -n 3p
}

echo "diff of two recordings of examples/shape_recompiles.py: $(median_ms "$BIN" diff "$tmp/a.db" "$tmp/b.db") ms"
na=$("$PY" bench/diff_big.py "$tmp/a.db" "$tmp/big_a.db" 100000)
nb=$("$PY" bench/diff_big.py "$tmp/b.db" "$tmp/big_b.db" 100000)
echo "diff of two traces of $na and $nb events: $(median_ms "$BIN" diff "$tmp/big_a.db" "$tmp/big_b.db") ms"
