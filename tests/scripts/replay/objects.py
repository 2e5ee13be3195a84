"""Plain state objects real model code passes: a dataclass with an instance
attribute that is not a field (as transformers' configs have), and a plain
object of a library class (argparse.Namespace, as generation configs and
KV caches are plain objects of transformers' classes)."""
import argparse
import dataclasses

import torch


@dataclasses.dataclass
class Cfg:
    scale: float = 2.0


cfg = Cfg()
cfg._internal = 1.0  # not a field
ns = argparse.Namespace(lr=0.5, steps=3)


def f(x, cfg, ns):
    return x * cfg.scale + cfg._internal + ns.lr * ns.steps


cf = torch.compile(f, backend="eager")
cf(torch.ones(3), cfg, ns)
cfg._internal = 2.0  # a recompile on the attribute outside the fields
cf(torch.ones(3), cfg, ns)
ns.steps = 4  # and on the library object's attribute
cf(torch.ones(3), cfg, ns)
print("done")
