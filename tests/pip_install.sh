#!/bin/sh
# pip_install.sh -- `pip install .` into a fresh venv, then dynrec used from
# there as a user would: from a directory outside the checkout, with the
# venv neither activated nor on PATH.
#
#   tests/pip_install.sh [PYTHON [TORCH_VERSION]]   (default: python3, 2.13.0)
#
# Checks: `dynrec run` and `python -m dynrec run` of an example exit 0 with
# plain python's output, record into the venv's python (meta
# python_executable), find its compiles, and diff as identical; `dynrec
# --version` names the venv's python and torch; `import dynrec` records in
# process (the extension module is installed); the pytest plugin is
# registered (pytest11) and fails a test over its recompile budget; the
# package is typed (py.typed, the extension's stub).  Exit 0 when all hold.
set -eu
cd "$(dirname "$0")/.."
REPO=$PWD
PYTHON=${1:-python3}
TORCH=${2:-2.13.0}
case "$TORCH" in 2.1[3-4].*) cap="" ;; *) cap=/dev/null ;; esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dynrec-pip.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "pip_install: FAILED: $*" >&2; exit 1; }

echo "pip_install: $PYTHON, torch $TORCH, venv in $tmp/venv" >&2
"$PYTHON" -m venv "$tmp/venv"
V=$tmp/venv
np=2.4.6
"$V/bin/python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || np=2.2.6
${cap:+env PIP_CONSTRAINT=$cap} "$V/bin/python" -m pip install -q --disable-pip-version-check \
    "torch==$TORCH" "numpy==$np" >/dev/null 2>&1 || fail "torch==$TORCH did not install"
"$V/bin/python" -m pip install -q --disable-pip-version-check "$REPO" >"$tmp/pip.log" 2>&1 ||
    { tail -20 "$tmp/pip.log" >&2; fail "pip install . failed"; }
[ -x "$V/bin/dynrec" ] || fail "no dynrec on the venv's PATH ($V/bin)"

mkdir "$tmp/elsewhere"
cp examples/quickstart.py "$tmp/elsewhere/"
cd "$tmp/elsewhere"
unset VIRTUAL_ENV
export PATH=/usr/bin:/bin
"$V/bin/python" quickstart.py >plain.out 2>plain.err || fail "plain python failed"
"$V/bin/dynrec" run -q -o a.db quickstart.py >a.out 2>a.err || fail "dynrec run: exit $?: $(cat a.err)"
"$V/bin/python" -m dynrec run -q -o b.db quickstart.py >b.out 2>b.err ||
    fail "python -m dynrec run: exit $?: $(cat b.err)"
cmp -s plain.out a.out || fail "dynrec run changed the output"
cmp -s plain.out b.out || fail "python -m dynrec run changed the output"
cmp -s plain.err a.err || fail "dynrec run changed stderr: $(diff plain.err a.err | head -5)"
exe=$("$V/bin/dynrec" sql --csv a.db "SELECT value FROM meta WHERE key = 'python_executable'" | tail -1 | tr -d "\r")
[ "$exe" = "$V/bin/python" ] || fail "recorded with $exe, not the venv's python"
n=$("$V/bin/dynrec" sql --csv a.db "SELECT count(*) FROM v_compiles" | tail -1 | tr -d "\r")
[ "$n" -ge 1 ] 2>/dev/null || fail "no compiles recorded ($n)"
"$V/bin/dynrec" diff a.db b.db >diff.out || fail "the two recordings differ: $(cat diff.out)"
"$V/bin/dynrec" --version >version.out
grep -qx "python: $V/bin/python" version.out || fail "--version: $(cat version.out)"
grep -q "^torch $TORCH" version.out || fail "--version: $(cat version.out)"
cat >inproc.py <<'EOF'
import torch
import dynrec
f = torch.compile(lambda x: x + 1, backend="eager")
with dynrec.record("c.db") as path:
    f(torch.ones(2))
print(path)
EOF
"$V/bin/python" inproc.py >inproc.out 2>&1 || fail "dynrec.record: $(tail -5 inproc.out)"
m=$("$V/bin/dynrec" sql --csv c.db "SELECT count(*) FROM v_compiles" | tail -1 | tr -d "\r")
[ "$m" = 1 ] || fail "dynrec.record recorded $m compiles, not 1"
site=$("$V/bin/python" -c 'import dynrec, os; print(os.path.dirname(dynrec.__file__))')
[ -f "$site/py.typed" ] && [ -f "$site/_dynrec.pyi" ] || fail "py.typed or _dynrec.pyi not installed in $site"
"$V/bin/python" -m pip install -q --disable-pip-version-check pytest==9.2.0 >/dev/null 2>&1 ||
    fail "pytest==9.2.0 did not install"
cat >test_budget.py <<'EOF'
import pytest
import torch


@pytest.mark.dynrec(max_recompiles=0)
def test_recompiles():
    f = torch.compile(lambda x: x.sin(), backend="eager")
    f(torch.ones(2))
    f(torch.ones(2, 2))
EOF
if "$V/bin/python" -m pytest -q -p no:cacheprovider --dynrec pt test_budget.py >pt.out 2>&1; then
    fail "the recompile budget did not fail the test: $(tail -5 pt.out)"
fi
grep -q "^dynrec: 1 recompile, budget 0" pt.out ||
    fail "the pytest plugin (pytest11 entry point) did not run: $(tail -5 pt.out)"
[ -f "pt/test_budget.py::test_recompiles.db" ] || fail "no per-test trace in pt/: $(ls pt)"
echo "pip_install: passed ($PYTHON: $n compiles, dynrec and python -m dynrec agree; in process and the pytest plugin work)" >&2
