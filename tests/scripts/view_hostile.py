"""view_hostile.py -- terminal escape sequences in what Dynamo records (tests/test_view.c).

A backend error message and a graph break reason carry ESC [2J (clear the
screen) and OSC 52 (set the clipboard); the viewer must show them escaped.
"""
import logging

import torch
import torch._dynamo

torch._dynamo.config.suppress_errors = True
logging.getLogger("torch._dynamo").setLevel(logging.CRITICAL)

EVIL = "\x1b[2J\x1b]52;c;aGFja2Vk\x07 evil"


def bad_backend(gm, example_inputs):
    raise RuntimeError("backend says " + EVIL)


@torch.compile(backend=bad_backend)
def f(x):
    return torch.relu(x) * 3


@torch.compile(backend="eager")
def g(x):
    torch._dynamo.graph_break(EVIL)
    return x + 1


print(f(torch.ones(3)).tolist(), g(torch.ones(3)).tolist())
