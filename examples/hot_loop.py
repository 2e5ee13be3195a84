"""hot_loop.py -- one compiled function called 10,000 times with one shape.

What its trace should show: `axpy` compiled once (0/0) and every later call
served from Dynamo's cache: v_frames.cache_hits = 10000 - compiles.  Two
recordings give the same v_canonical keys.
"""

import torch

CALLS = 10_000


@torch.compile(backend="eager")
def axpy(a, x, y):
    return a * x + y


def main():
    x = torch.ones(4)
    y = torch.zeros(4)
    for _ in range(CALLS):
        y = axpy(0.5, x, y) * 0.5
    print(CALLS, [round(v, 6) for v in y.tolist()])


if __name__ == "__main__":
    main()
