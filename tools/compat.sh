#!/bin/sh
# compat.sh -- the compatibility matrix: dynrec built for, and its
# end-to-end suites run against, each CPython x torch combination that can
# be installed here.
#
#   tools/compat.sh                    every combination of the matrix
#   tools/compat.sh py3.11:2.14.1 ...  only these
#   tools/compat.sh --list             the matrix, and which venvs exist
#
# Each combination gets a venv of its own outside the checkout, made once
# and reused: $DYNREC_COMPAT_DIR (default ~/.cache/dynrec-compat)/venv-pyX.Y-torchV,
# filled by tools/setup.sh with that torch pinned (other Pythons' wheels
# are CUDA builds of several GB from PyPI, which run on the CPU; pip's own
# cache keeps them).  dynrec is built for the venv's interpreter into
# build/compat/pyX.Y-torchV/ with the Makefile, and the suites that run the
# real binary on real torch.compile are run against it.  Each line of
# $DYNREC_COMPAT_DIR/results.tsv is one combination's result, newest last;
# the summary printed at the end is the table the README shows.
#
# Exit status: 0 when every combination asked for passed, 1 when one
# failed, 2 for bad usage.  A combination that cannot be installed here (no
# such Python, a Python without a shared libpython) is reported as skipped.
set -eu
cd "$(dirname "$0")/.."

DIR=${DYNREC_COMPAT_DIR:-$HOME/.cache/dynrec-compat}
JOBS=${JOBS:-2}
# The suites that record, diff, replay, view, pack and export with the real
# binary and real torch (tests/test_*.c), as one Criterion filter.
SUITES=${COMPAT_SUITES:-'@(e2e|dynamo|replay|identical|identity|pack|view|tools|inproc|dist|ranks|diff_dirs)/*'}
# The torch releases of the matrix: tools/requirements-compat.txt, one pin each.
TORCHES=$(sed -n 's/^torch==\([0-9][0-9.]*\).*/\1/p' tools/requirements-compat.txt)
PYTHONS="3.10 3.11 3.12 3.13"

usage() {
    echo "usage: tools/compat.sh [--list] [pyX.Y:TORCH ...]" >&2
    echo "  the matrix: Python $PYTHONS x torch $(echo $TORCHES)" >&2
    exit 2
}

# The interpreter for X.Y: pyenv's newest X.Y.*, else pythonX.Y on PATH.
python_for() {
    root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
    p=$(ls -d "$root"/versions/"$1".* 2>/dev/null | sort -V | tail -1)
    if [ -n "$p" ] && [ -x "$p/bin/python$1" ]; then echo "$p/bin/python$1"; return; fi
    command -v "python$1" 2>/dev/null || true
}

# numpy pinned per Python: 2.4 needs 3.11 or newer.
numpy_for() {
    case "$1" in 3.10) echo 2.2.6 ;; *) echo 2.4.6 ;; esac
}

venv_of() { echo "$DIR/venv-py$1-torch$2"; }

if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then usage; fi
if [ "${1:-}" = "--list" ]; then
    for py in $PYTHONS; do for tv in $TORCHES; do
        v=$(venv_of "$py" "$tv")
        state="not made"
        [ -x "$v/bin/python" ] && state="venv at $v"
        printf 'py%s:%s\t%s\n' "$py" "$tv" "$state"
    done; done
    exit 0
fi

combos="$*"
if [ -z "$combos" ]; then
    for py in $PYTHONS; do for tv in $TORCHES; do combos="$combos py$py:$tv"; done; done
fi
for c in $combos; do
    case "$c" in py3.1[0-9]:2.[0-9]*.[0-9]*) ;; *) echo "compat: bad combination '$c'" >&2; usage ;; esac
done

mkdir -p "$DIR" build/compat
make --no-print-directory build/tests >/dev/null
results="$DIR/results.tsv"
failed=0
summary=""
for c in $combos; do
    py=${c%%:*}; py=${py#py}; tv=${c#*:}
    name="py$py-torch$tv"
    v=$(venv_of "$py" "$tv")
    log="build/compat/$name.log"
    start=$(date +%s)
    status="" detail=""
    python=$(python_for "$py")
    if [ -z "$python" ]; then
        status=skipped detail="no Python $py here (pyenv install $py, or python$py on PATH)"
    elif [ "$("$python" -c 'import sysconfig; print(sysconfig.get_config_var("Py_ENABLE_SHARED"))')" != 1 ]; then
        status=skipped detail="$python has no shared libpython (dynrec embeds it)"
    elif ! VENV=$v PYTHON=$python TORCH_VERSION=$tv NUMPY_VERSION=$(numpy_for "$py") \
            tools/setup.sh >"$log" 2>&1; then
        status=skipped detail="torch $tv did not install for Python $py (see $log)"
    elif ! make --no-print-directory VENV="$v" BUILD="build/compat/$name" \
            "build/compat/$name/dynrec" "build/compat/$name/dynrec_sqlite.so" pkg >>"$log" 2>&1; then
        status=FAILED detail="the build failed (see $log)"
    else
        echo "compat: $name: running the end-to-end suites ($log)" >&2
        if DYNREC_BIN=$PWD/build/compat/$name/dynrec DYNREC_PYTHON=$v/bin/python \
                DYNREC_PKG=$PWD/build/compat/$name/pkg \
                build/tests --jobs "$JOBS" --filter "$SUITES" >>"$log" 2>&1; then
            status=passed
        else
            status=FAILED
        fi
        detail=$(grep -E '^\[====\] Synthesis' "$log" | tail -1 | sed 's/^\[====\] Synthesis: //')
        if [ "$status" = FAILED ]; then
            bad=$(grep -E '^\[FAIL\]' "$log" | grep -oE '[a-z0-9_]+::[a-zA-Z0-9_]+' | sort -u | head -8 | tr '\n' ' ')
            detail="$detail; failing: $bad"
        fi
    fi
    secs=$(( $(date +%s) - start ))
    [ "$status" = FAILED ] && failed=1
    line=$(printf '%s\t%s\t%s\t%s\t%s\t%ss\t%s' "$(date -u +%Y-%m-%d)" "$py" "$tv" "$status" "$(uname -m)" "$secs" "$detail")
    echo "$line" >>"$results"
    echo "compat: $name: $status ($secs s) $detail" >&2
    summary="$summary
| $py | $tv | $status | $detail |"
done

echo "| Python | torch | result | tests |"
echo "|---|---|---|---|"
echo "$summary" | sed '/^$/d'
exit $failed
