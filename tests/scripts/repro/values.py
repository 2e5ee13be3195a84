"""repro scenario: a compiled function whose inputs are of many kinds the
capture keeps (a string that changes between calls, numbers, containers
with a shared list, a namedtuple, a dataclass, an enum, a plain object,
tensors that are non-contiguous, a view, offset into storage, marked
dynamic, of integer, bool and float64 dtypes, one too large for its data to
be kept) and a module-level global; each change of `mode`, of the global
and of the marked tensor's size is a recompile with its own guard failure."""

import collections
import dataclasses
import enum

import torch
import torch._dynamo

torch._dynamo.config.automatic_dynamic_shapes = False
Point = collections.namedtuple("Point", ["x", "y"])
LIMIT = 3


class Color(enum.Enum):
    RED = 1
    BLUE = 2


@dataclasses.dataclass
class Opts:
    scale: float
    shift: int


class Box:
    def __init__(self, t):
        self.t = t
        self.tag = "box"


def helper(t, k):
    return t * k


@torch.compile(backend="eager")
def f(mode, x, p, opts, color, box, items, table, flags, big, dyn):
    y = helper(x.t() @ x, opts.scale) + p.x * p.y
    if mode == "fast":
        y = y + 1
    if color is Color.RED:
        y = y * 2
    y = y + box.t.sum() + len(items[0]) + table["a"][1] + opts.shift
    y = y + flags.sum() + big.sum().float() + dyn.sum() * LIMIT
    return y.sum()


def main():
    torch.manual_seed(0)
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    x = base.t()                      # non-contiguous
    shared = [1, 2]
    box = Box(torch.arange(10, dtype=torch.float64)[2:7])  # a view with an offset
    flags = torch.tensor([True, False, True])
    big = torch.randn(40, 40, dtype=torch.float64)          # 12.8 KB: data not kept
    global LIMIT
    for i, (mode, n) in enumerate([("fast", 5), ("fast", 6), ("slow", 6), ("slow", 6)]):
        dyn = torch.ones(n, dtype=torch.int64)
        torch._dynamo.mark_dynamic(dyn, 0, min=2, max=64)
        if i == 3:
            LIMIT = 4
        out = f(mode, x, Point(2, 3), Opts(1.5, 2), Color.RED, box, [shared, shared],
                {"a": shared}, flags, big, dyn)
        print(mode, n, float(out))


if __name__ == "__main__":
    main()
