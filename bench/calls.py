"""calls.py N -- time N calls to a trivial Python function (no torch).

Prints the loop's time in seconds on stdout, so bench/frame_hook.sh can
compare plain python with dynrec run with and without the frame hook."""

import sys
import time


def f(x):
    return x


def loop(n):
    for i in range(n):
        f(i)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000
    t = time.perf_counter()
    loop(n)
    print(f"{time.perf_counter() - t:.6f}")


main()
