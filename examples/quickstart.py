"""quickstart.py -- a small torch.compile workload for `make demo`.

What its trace should show: torch 2.13 in meta, Dynamo's frame hook active,
and among the script's own code two entries for the compiled function `step`,
one per cache entry Dynamo built: the static one for size 8, run 70 times,
and the dynamic-shape one that served sizes 16 and 32, run 140 times.  Above
them are the library frames Dynamo ran while it compiled.
"""

import torch


@torch.compile(backend="eager")
def step(x, w):
    y = torch.tanh(x @ w)
    return y.sum()


def main():
    torch.manual_seed(0)
    total = 0.0
    for n in (8, 16, 32):
        w = torch.randn(n, n)
        for _ in range(70):
            total += float(step(torch.randn(4, n), w))
    print(f"ran 210 steps, total {total:.4f}")


if __name__ == "__main__":
    main()
