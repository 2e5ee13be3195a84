"""replay scenario: closure cells mutated inside compiled code, with a graph
break (resume function), dynamic shapes by mark_dynamic and automatic
dynamic after a recompile."""

import torch
import torch._dynamo


def make():
    total = 0
    seen = []

    @torch.compile(backend="eager")
    def step(x):
        nonlocal total
        total += 1
        y = x.cos() * total
        torch._dynamo.graph_break()
        seen.append(1)
        return y + len(seen)

    return step, lambda: (total, len(seen))


@torch.compile(backend="eager")
def grow(x):
    return x.sum(0) * 2


@torch.compile(backend="eager")
def marked(x):
    return x.mean() + x.shape[0]


def main():
    step, state = make()
    for n in (3, 3, 4):
        step(torch.ones(n))
    print("state", state())
    for n in (2, 3, 4, 5):       # the second size makes the dimension dynamic
        grow(torch.ones(n, 3))
    x = torch.ones(6)
    torch._dynamo.mark_dynamic(x, 0)
    marked(x)
    marked(torch.ones(7))
    print("done")


if __name__ == "__main__":
    main()
