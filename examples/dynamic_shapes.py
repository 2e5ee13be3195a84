"""dynamic_shapes.py -- one graph for every size, with a symbolic size.

compile(dynamic=True) makes the input's sizes symbolic from the first call.
What its trace should show: one compile of `norm` (0/0) whose guards
(v_guards) talk about L['x'].size()[0] rather than a fixed size, a graph in
v_graphs that takes the size as a symbol (an input named s<n>), and no
recompile for the later sizes (4 calls, 3 cache hits).
"""

import torch


@torch.compile(backend="eager", dynamic=True)
def norm(x):
    return (x - x.mean()) / (x.std() + 1.0)


def main():
    for n in (3, 5, 8, 13):
        x = torch.arange(n, dtype=torch.float32)
        print(n, [round(v, 4) for v in norm(x).tolist()])


if __name__ == "__main__":
    main()
