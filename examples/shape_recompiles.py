"""shape_recompiles.py -- every new input size is a recompile.

Nothing is marked dynamic and automatic_dynamic_shapes is off, so Dynamo
specializes on each size it sees.  What its trace should show: one frame
`scale` with four compiles in v_compiles (0/0 .. 0/3, all compiled, the last
three with recompile = 1); each with a TENSOR_MATCH guard on L['x'] pinning
its size; for the recompile 0/k one v_guard_failures row per older cache
entry (k rows), each reason naming the size mismatch; and cache hits for the
calls that repeat a size (12 calls - 4 compiles).
"""

import torch
import torch._dynamo

torch._dynamo.config.automatic_dynamic_shapes = False


@torch.compile(backend="eager")
def scale(x):
    return (x * 2 + 1).sum()


def main():
    for n in (2, 3, 4, 5):
        for _ in range(3):
            x = torch.arange(n, dtype=torch.float32)
            print(n, float(scale(x)))


if __name__ == "__main__":
    main()
