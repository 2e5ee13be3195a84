"""hot_loop.py N -- N calls (default 10^6) of one compiled function, all cache hits
after the first: the Dynamo-capture benchmark's workload (b)."""

import sys
import time

import torch


@torch.compile(backend="eager")
def step(x):
    return x + 1


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    x = torch.zeros(2)
    step(x)
    t = time.perf_counter()
    for _ in range(n):
        step(x)
    print(f"{time.perf_counter() - t:.6f}")


main()
