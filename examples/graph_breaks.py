"""graph_breaks.py -- an explicit graph break inside a compiled function.

What its trace should show: a v_graph_breaks row for `step` in this file at
the line of torch._dynamo.graph_break() (the line tagged GRAPH_BREAK below),
with a reason; compile 0/0 taking two attempts (v_speculation: checkpoint,
rollback and restart of the first, checkpoint of the second, which compiles
up to the break); the code before and after the break compiled as separate
graphs in v_graphs (`step` and its resume function).  Two recordings give
the same v_canonical keys.
"""

import torch
import torch._dynamo


@torch.compile(backend="eager")
def step(x):
    y = torch.sin(x) + 1
    torch._dynamo.graph_break()  # GRAPH_BREAK
    return torch.cos(y) * 2


def main():
    for i in range(3):
        x = torch.arange(4, dtype=torch.float32) + i
        print(i, [round(v, 4) for v in step(x).tolist()])


if __name__ == "__main__":
    main()
