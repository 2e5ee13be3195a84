"""Plain state objects real model code passes: a dataclass with an instance
attribute that is not a field (as transformers' configs have), and a plain
object of a library class (argparse.Namespace, as generation configs and
KV caches are plain objects of transformers' classes), and an object whose
class keeps its state in __slots__ (a private one too)."""
import argparse
import dataclasses

import torch


@dataclasses.dataclass
class Cfg:
    scale: float = 2.0


cfg = Cfg()
cfg._internal = 1.0  # not a field
ns = argparse.Namespace(lr=0.5, steps=3)


class Point:
    __slots__ = ("x", "__y")

    def __init__(self, x, y):
        self.x = x
        self.__y = y

    def y(self):
        return self.__y


pt = Point(1.0, 2.0)


def f(x, cfg, ns, pt):
    return x * cfg.scale + cfg._internal + ns.lr * ns.steps + pt.x * pt.y()


cf = torch.compile(f, backend="eager")
cf(torch.ones(3), cfg, ns, pt)
cfg._internal = 2.0  # a recompile on the attribute outside the fields
cf(torch.ones(3), cfg, ns, pt)
ns.steps = 4  # and on the library object's attribute
cf(torch.ones(3), cfg, ns, pt)
pt.x = 3.0  # and on a slot
cf(torch.ones(3), cfg, ns, pt)
print("done")
