#!/bin/sh
# train_dict.sh -- remake schema/default.dict, the zstd dictionary in every trace.
#
# Records the examples and the compile-heavy benchmark, then trains a 16 KiB
# dictionary on all their blobs (tools/train_dict.c).  Run it after a change
# in what the recorder stores, and commit the new schema/default.dict; old
# traces keep the dictionary they were written with.
set -eu
cd "$(dirname "$0")/.."
make --no-print-directory build/dynrec build/train_dict >/dev/null
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
i=0
for script in examples/*.py bench/compile_heavy.py; do
    i=$((i + 1))
    build/dynrec run -q -o "$dir/t$i.db" "$script" >/dev/null 2>&1 || true
done
build/train_dict schema/default.dict "$dir"/t*.db
