#!/bin/sh
# sandbox_bench.sh -- what confining a replay costs at its start.
# A recording of examples/quickstart.py is replayed confined (the default)
# and with --no-sandbox, interleaved, N times each; prints the median wall
# time of each and their difference, plus the median of bwrap starting
# /bin/true alone (the namespaces and mounts without Python).
# Goal: the sandbox adds at most 50 ms to a replay's start.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
N=${N:-7}
bin="$PWD/$BUILD/dynrec"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp examples/quickstart.py "$tmp/"
(cd "$tmp" && "$bin" run -q -o t.db quickstart.py >/dev/null)
ms() { date +%s%3N; }
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
: >"$tmp/conf"
: >"$tmp/free"
: >"$tmp/true"
i=0
while [ "$i" -lt "$N" ]; do
    t0=$(ms); "$bin" replay -o "$tmp/r.db" "$tmp/t.db" >/dev/null 2>&1 || true; t1=$(ms)
    rm -f "$tmp/r.db"
    echo $((t1 - t0)) >>"$tmp/conf"
    t0=$(ms); "$bin" replay --no-sandbox -o "$tmp/r.db" "$tmp/t.db" >/dev/null 2>&1 || true
    t1=$(ms)
    rm -f "$tmp/r.db"
    echo $((t1 - t0)) >>"$tmp/free"
    t0=$(ms); bwrap --unshare-all --die-with-parent --ro-bind /usr /usr --symlink usr/lib /lib \
        --symlink usr/lib64 /lib64 --proc /proc --dev /dev --tmpfs /tmp /usr/bin/true; t1=$(ms)
    echo $((t1 - t0)) >>"$tmp/true"
    i=$((i + 1))
done
c=$(median <"$tmp/conf"); f=$(median <"$tmp/free"); b=$(median <"$tmp/true")
echo "replay confined: median ${c} ms; --no-sandbox: ${f} ms; difference $((c - f)) ms (N=$N)"
echo "bwrap starting /bin/true: median ${b} ms"
