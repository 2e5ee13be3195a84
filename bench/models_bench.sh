#!/bin/sh
# models_bench.sh -- recording and replaying real models (transformers, tiny
# random-weight configs: the scripts of tests/scripts/models/).
#
# Per script, RUNS times (default 3), interleaved:
#   python      plain python script.py
#   dynrec      dynrec run script.py
#   nocapture   dynrec run without the capture of frame inputs
#               (DYNREC_FAULT_HOOK=capture switches that hook off at its first call)
#   replay      dynrec replay --trust of the dynrec trace, from another directory
#   startup     python running only the script's imports, and torch._dynamo:
#               the interpreter, torch and the libraries the compiled code
#               lives in, which a replay loads as the program did (transformers
#               imports a model's module only when the script names it)
# Prints medians: the recording's ratio to python; the capture's share of
# the trace's bytes; the replay's time next to the recorded compile time
# (the sum of v_compiles.duration_ms) plus that start-up, the bound the
# replay should stay within.
set -eu
cd "$(dirname "$0")/.."
PY=${PY:-$PWD/.venv/bin/python}
DYNREC=${DYNREC:-$PWD/build/dynrec}
RUNS=${RUNS:-3}
OUT=${OUT:-$PWD/bench/out/models}
SCRIPTS=${SCRIPTS:-$(ls tests/scripts/models/*.py)}
export HF_HUB_OFFLINE=1 DYNREC_PYTHON="$PY"
if ! "$PY" -c 'import transformers' 2>/dev/null; then
    echo "bench/models_bench.sh: no transformers in $PY (tools/setup.sh installs it)" >&2
    exit 1
fi
rm -rf "$OUT"
mkdir -p "$OUT/away"

wall() { # file, command...
    f=$1; shift
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>&1 || echo "bench/models_bench.sh: failed: $*" >&2
    t1=$(date +%s.%N)
    echo "$t0 $t1" | awk '{print $2-$1}' >>"$f"
}
median() { sort -g "$1" | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

for s in $SCRIPTS; do # the script's top-level imports, and Dynamo's
    "$PY" - "$s" "$OUT/$(basename "$s" .py)-imports.py" <<'EOF'
import ast, sys
tree = ast.parse(open(sys.argv[1]).read())
body = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
body.append(ast.parse("import torch._dynamo").body[0])
open(sys.argv[2], "w").write(ast.unparse(ast.Module(body=body, type_ignores=[])) + "\n")
EOF
done
for i in $(seq "$RUNS"); do
    for s in $SCRIPTS; do
        n=$(basename "$s" .py)
        wall "$OUT/$n-startup.txt" "$PY" "$OUT/$n-imports.py"
        wall "$OUT/$n-python.txt" "$PY" "$s"
        wall "$OUT/$n-dynrec.txt" "$DYNREC" run -q -o "$OUT/$n.db" "$s"
        DYNREC_FAULT_HOOK=capture wall "$OUT/$n-nocapture.txt" "$DYNREC" run -q \
            -o "$OUT/$n-nocapture.db" "$s"
        rm -f "$OUT/away/$n-r.db"
        (cd "$OUT/away" && wall "$OUT/$n-replay.txt" "$DYNREC" replay --trust -o "$n-r.db" \
            "$OUT/$n.db")
    done
done

echo "bench/models_bench.sh: medians of $RUNS interleaved runs (wall seconds)"
printf '  %-18s %8s %8s %6s %8s %8s %6s %8s %9s %9s %s\n' script python dynrec ratio \
    trace capture share startup replay bound reproduced
for s in $SCRIPTS; do
    n=$(basename "$s" .py)
    p=$(median "$OUT/$n-python.txt"); d=$(median "$OUT/$n-dynrec.txt")
    r=$(median "$OUT/$n-replay.txt"); st=$(median "$OUT/$n-startup.txt")
    db=$(stat -c %s "$OUT/$n.db"); dn=$(stat -c %s "$OUT/$n-nocapture.db")
    ms=$("$DYNREC" sql --csv "$OUT/$n.db" \
        "SELECT coalesce(sum(duration_ms), 0) FROM v_compiles" | tail -1)
    rep=$(cd "$OUT/away" && "$DYNREC" replay --trust -o "$n-r2.db" "$OUT/$n.db" 2>/dev/null |
        sed -n 's/.*reproduced \([0-9]*\/[0-9]*\) compile.*/\1/p' | head -1)
    echo "$n $p $d $db $dn $r $ms $st ${rep:-?}" | awk '{
        printf "  %-18s %8.2f %8.2f %6.3f %8d %8d %5.1f%% %8.2f %9.2f %9.2f %s\n",
            $1, $2, $3, $3 / $2, $4, $4 - $5, 100 * ($4 - $5) / $4, $8, $6, $7 / 1000 + $8, $9 }'
done
echo "  (trace, capture: bytes; share: the capture's part of the trace; startup: python"
echo "   running the script's imports and torch._dynamo's; bound: the recorded compile"
echo "   time plus that start-up; reproduced: compiles, --trust)"
