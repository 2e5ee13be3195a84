#!/bin/sh
# setup.sh -- install what dynrec needs on a fresh Debian machine, idempotently.
#
# Debian packages (compiler, SQLite, zstd, Criterion; ncurses and tmux for
# the viewer and its tests) with apt-get, and a project virtualenv (.venv)
# holding torch==2.13.0, the CPU build.  Prints nothing when everything is
# already there.  `setup.sh --packages` installs the Debian packages only
# (what `pip install .` needs).  tools/compat.sh calls it with VENV, PYTHON, TORCH_VERSION
# and NUMPY_VERSION set, for each venv of its matrix.
set -eu
cd "$(dirname "$0")/.."

VENV=${VENV:-.venv}
TORCH_VERSION=${TORCH_VERSION:-2.13.0}
NUMPY_VERSION=${NUMPY_VERSION:-2.4.6}
TLPARSE_VERSION=0.4.3
PYTEST_VERSION=9.2.0
EXPECTTEST_VERSION=0.3.0
TRANSFORMERS_VERSION=5.24.0
NBCLIENT_VERSION=0.11.0
IPYKERNEL_VERSION=7.4.0
MYPY_VERSION=2.4.1
RUFF_VERSION=0.17.6
PYTHON=${PYTHON:-python3}

need=""
# cmark-gfm (GitHub's CommonMark) renders `dynrec report` in the tests;
# tmux drives `dynrec view` in them.  bubblewrap and libseccomp confine
# `dynrec replay` (replayer/sandbox.c).
pkgs="gcc make pkg-config libsqlite3-dev libzstd-dev libcriterion-dev sqlite3 cmark-gfm libncurses-dev tmux bubblewrap libseccomp-dev"
# `make check` checks the C files' format with clang-format (not needed to
# build: --packages leaves it out).
[ "${1:-}" = "--packages" ] || pkgs="$pkgs clang-format"
# `make fuzz` only: clang with libFuzzer.
[ "${1:-}" = "--fuzz" ] && pkgs="$pkgs clang libclang-rt-14-dev"
for pkg in $pkgs; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
        need="$need $pkg"
done
# The interpreter must come with headers and a shared libpython to embed.
if ! command -v "$PYTHON" >/dev/null 2>&1 || ! command -v "$PYTHON-config" >/dev/null 2>&1; then
    need="$need python3 python3-dev python3-venv"
fi
if [ -n "$need" ]; then
    echo "setup: installing Debian packages:$need" >&2
    SUDO=""
    [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $need >/dev/null
fi

# --packages: the system packages only (what `pip install .` needs to build).
[ "${1:-}" = "--packages" ] && exit 0

if [ ! -x "$VENV/bin/python" ]; then
    echo "setup: creating the virtualenv $VENV" >&2
    "$PYTHON" -m venv "$VENV"
fi
# Always pinned: an unpinned torch pulls a multi-GB CUDA build.  Where pip
# is capped at the releases on this disk (/etc/xdg/pip), a newer pinned
# release is asked for with the cap lifted for this one install.
cap=""
case "$TORCH_VERSION" in 2.1[3-4].*) ;; *) cap="/dev/null" ;; esac
if ! "$VENV/bin/python" -c "import torch, numpy, sys; sys.exit(torch.__version__.split('+')[0] != '$TORCH_VERSION')" >/dev/null 2>&1; then
    echo "setup: installing torch==$TORCH_VERSION into $VENV" >&2
    ${cap:+env PIP_CONSTRAINT=$cap} "$VENV/bin/python" -m pip install -q --disable-pip-version-check \
        "torch==$TORCH_VERSION" "numpy==$NUMPY_VERSION" >&2
fi
# Test-only: tlparse reads the TORCH_TRACE logs that `dynrec export` writes.
if ! "$VENV/bin/tlparse" --version 2>/dev/null | grep -qx "tlparse $TLPARSE_VERSION"; then
    echo "setup: installing tlparse==$TLPARSE_VERSION into $VENV (for the tests)" >&2
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check \
        "tlparse==$TLPARSE_VERSION" >&2
fi
# Test-only: the replay tests record transformers models (tiny configs,
# random weights, HF_HUB_OFFLINE=1: nothing is downloaded when they run).
# Pinned; it works with the pinned torch and does not replace it.  It needs
# Python 3.11 or newer: on 3.10 those tests say they are skipped.
if "$VENV/bin/python" -c "import sys; sys.exit(sys.version_info < (3, 11))" &&
   ! "$VENV/bin/python" -c "import sys; from importlib.metadata import version; sys.exit(version('transformers') != '$TRANSFORMERS_VERSION')" >/dev/null 2>&1; then
    echo "setup: installing transformers==$TRANSFORMERS_VERSION into $VENV (for the tests)" >&2
    ${cap:+env PIP_CONSTRAINT=$cap} "$VENV/bin/python" -m pip install -q \
        --disable-pip-version-check "transformers==$TRANSFORMERS_VERSION" \
        "torch==$TORCH_VERSION" >&2
fi
# Test-only: the tests record pytest runs (`dynrec run -m pytest`) of test
# files written as PyTorch's own are (torch._dynamo.test_case needs
# expecttest).
if ! "$VENV/bin/python" -c "import pytest, expecttest, sys; from importlib.metadata import version; sys.exit(pytest.__version__ != '$PYTEST_VERSION' or version('expecttest') != '$EXPECTTEST_VERSION')" >/dev/null 2>&1; then
    echo "setup: installing pytest==$PYTEST_VERSION expecttest==$EXPECTTEST_VERSION into $VENV (for the tests)" >&2
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check \
        "pytest==$PYTEST_VERSION" "expecttest==$EXPECTTEST_VERSION" >&2
fi
# Test-only: the in-process tests run a notebook in a real Jupyter kernel
# (nbclient, ipykernel), and `make check` type-checks the public Python API
# with mypy --strict and lints all of dynrec's Python with ruff.
if ! "$VENV/bin/python" -c "import sys; from importlib.metadata import version as v; sys.exit(v('nbclient') != '$NBCLIENT_VERSION' or v('ipykernel') != '$IPYKERNEL_VERSION' or v('mypy') != '$MYPY_VERSION' or v('ruff') != '$RUFF_VERSION')" >/dev/null 2>&1; then
    echo "setup: installing nbclient==$NBCLIENT_VERSION ipykernel==$IPYKERNEL_VERSION mypy==$MYPY_VERSION ruff==$RUFF_VERSION into $VENV (for the tests)" >&2
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check \
        "nbclient==$NBCLIENT_VERSION" "ipykernel==$IPYKERNEL_VERSION" "mypy==$MYPY_VERSION" \
        "ruff==$RUFF_VERSION" >&2
fi
