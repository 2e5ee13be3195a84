"""The recording every hostile-trace test edits (tests/test_hostile_values.c):
one compiled frame with a tensor, a plain library object and a global."""
import argparse

import torch

SCALE = 2.0


def f(x, ns):
    return x * ns.lr * SCALE


torch.compile(f, backend="eager")(torch.ones(3), argparse.Namespace(lr=0.5))
print("done")
