#!/bin/sh
# frame_hook_callgrind.sh -- the frame hook's cost in instructions per call.
#
# valgrind --tool=callgrind counts instructions, which, unlike seconds, repeat
# exactly.  bench/calls.py runs with N1 and N2 calls under each mode; the
# difference of the totals divided by N2 - N1 is the cost per loop iteration
# without start-up.  Modes: run (no hook installed), passthrough (hook
# installed, counting off), all-frames (hook counting).
set -eu
cd "$(dirname "$0")/.."
DYNREC=${DYNREC:-$PWD/build/dynrec}
N1=${N1:-100000}
N2=${N2:-200000}
OUT=${OUT:-$PWD/bench/out}
mkdir -p "$OUT"

count() { # mode n -> total instructions
    mode=$1 n=$2
    case $mode in
    run) set -- "$DYNREC" run -q -o "$OUT/cg.db" bench/calls.py "$n" ;;
    passthrough) export DYNREC_BENCH_NOCOUNT=1
        set -- "$DYNREC" run -q --all-frames -o "$OUT/cg.db" bench/calls.py "$n" ;;
    all-frames) set -- "$DYNREC" run -q --all-frames -o "$OUT/cg.db" bench/calls.py "$n" ;;
    esac
    valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.out" "$@" 2>&1 >/dev/null |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
    unset DYNREC_BENCH_NOCOUNT
}
echo "bench/frame_hook_callgrind.sh: instructions per iteration of a loop calling f(i)"
base=""
for mode in run passthrough all-frames; do
    a=$(count "$mode" "$N1")
    b=$(count "$mode" "$N2")
    per=$(echo "$a $b $N1 $N2" | awk '{printf "%.1f", ($2-$1)/($4-$3)}')
    [ -n "$base" ] || base=$per
    echo "$mode $per $base" | awk '{printf "  %-12s %7.1f instructions/call  added %+6.1f\n", $1, $2, $2-$3}'
done
