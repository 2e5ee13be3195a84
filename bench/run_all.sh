#!/bin/sh
# run_all.sh -- every dynrec benchmark, as `make bench` runs them.
#   frame_hook.sh   the PEP 523 hook's cost per Python call, dynrec run vs python
#   gc_clock.sh     whether recording moves the program's garbage collections
#   writer_bench    the recorder's cost per event and bytes per event
#   dict_bench      whether a trained zstd dictionary pays off for our payloads
#   open_bench.sh   opening a 1M-event trace, and dynrec show on it
#   size_bench.sh   trace size against TORCH_TRACE on two workloads
#   diff_bench.sh   dynrec diff on two example traces and on two of 100k events
#   view_bench.sh   dynrec view: time to the first screen of a 1M-event trace
#   sandbox_bench.sh what confining a replay (bubblewrap+seccomp) adds to its start
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
mkdir -p bench/out
bench/frame_hook.sh
bench/frame_hook_callgrind.sh
bench/dynamo_bench.sh
bench/gc_clock.sh
"$BUILD/writer_bench" 1000000 bench/out
bench/open_bench.sh
bench/size_bench.sh
make --no-print-directory "$BUILD/dict_bench" >/dev/null
site=$(.venv/bin/python -c 'import torch, os; print(os.path.dirname(torch.__file__))')
"$BUILD/dict_bench" $( (find "$site/_dynamo" -name '*.py' | sort | head -100; find "$site/fx" -name '*.py' | sort | head -100) )
bench/diff_bench.sh
bench/view_bench.sh
bench/sandbox_bench.sh
