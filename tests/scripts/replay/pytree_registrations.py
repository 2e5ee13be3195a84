"""replay scenario: a class of the program registered with pytree while the
program runs (register_pytree_node), which a nonstrict_trace function takes:
Dynamo reads torch.utils._pytree.SUPPORTED_NODES, and guards its version
(the recompile for another shape fails a tensor check, not that one)."""

import torch
import torch.utils._pytree as pytree


class Point:
    def __init__(self, x, y):
        self.x = x
        self.y = y


@torch._dynamo.nonstrict_trace
def norm(p):
    return (p.x * p.x + p.y * p.y).sqrt()


def fn(p):
    return norm(p) + 1


pytree.register_pytree_node(Point, lambda p: ((p.x, p.y), None),
                            lambda xy, _: Point(xy[0], xy[1]))
print(torch.compile(fn, backend="eager")(Point(torch.ones(2), torch.ones(2))).tolist())
print(torch.compile(fn, backend="eager")(Point(torch.ones(3), torch.ones(3))).tolist())
