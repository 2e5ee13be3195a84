"""view_sizes.py -- recompiles on a size guard and one graph break (tests/test_view.c).

`scale` is compiled with automatic dynamic shapes off, so each new size
(3, 4, 5) recompiles on the size guard of x; `step` breaks its graph once.
With an argument, the script waits for that file to appear before the call
with size 5 (saying "waiting" first): the --follow test opens the viewer
in between.
"""
import os
import sys
import time

import torch
import torch._dynamo

torch._dynamo.config.automatic_dynamic_shapes = False


@torch.compile(backend="eager")
def scale(x):
    return (x * 2 + 1).sum()  # SIZE_GUARD


@torch.compile(backend="eager")
def step(x):
    y = torch.sin(x) + 1
    torch._dynamo.graph_break()  # GRAPH_BREAK
    return torch.cos(y)


def main():
    gate = sys.argv[1] if len(sys.argv) > 1 else None
    print(step(torch.ones(2)).tolist())
    for n in (3, 4, 5):
        if n == 5 and gate:
            print("waiting", flush=True)
            while not os.path.exists(gate):
                time.sleep(0.05)
        print(n, float(scale(torch.arange(n, dtype=torch.float32))), flush=True)


main()
