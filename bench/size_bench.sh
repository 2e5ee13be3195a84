#!/bin/sh
# size_bench.sh -- trace size against TORCH_TRACE's logs of the same run.
#   bench/compile_heavy.py       several small models, recompiles, graph breaks
#   bench/transformer_train.py   a small transformer trained with aot_eager
# Each is run once with `dynrec run` and once with TORCH_TRACE=dir python;
# prints both sizes, their ratio (goal: at most 0.5) and where the trace's
# bytes go (SQLite's dbstat).
set -eu
cd "$(dirname "$0")/.."
PY=${PY:-$PWD/.venv/bin/python}
DYNREC=${DYNREC:-$PWD/build/dynrec}
OUT=${OUT:-$PWD/bench/out}
mkdir -p "$OUT"
for w in compile_heavy transformer_train; do
    rm -rf "$OUT/tt-$w" "$OUT/size-$w.db"
    TORCH_TRACE="$OUT/tt-$w" "$PY" "bench/$w.py" >/dev/null
    "$DYNREC" run -q -o "$OUT/size-$w.db" "bench/$w.py" >/dev/null
    db=$(stat -c %s "$OUT/size-$w.db")
    tt=$(du -sb "$OUT/tt-$w" | cut -f1)
    echo "$w $db $tt" | awk '{printf "%s: dynrec trace %d bytes, TORCH_TRACE %d bytes: %.2fx\n", $1, $2, $3, $2/$3}'
    sqlite3 "$OUT/size-$w.db" "SELECT '  ' || name || ' ' || sum(pgsize) FROM dbstat GROUP BY name ORDER BY sum(pgsize) DESC LIMIT 5" 2>/dev/null || true
done
