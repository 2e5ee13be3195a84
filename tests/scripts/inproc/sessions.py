"""Two sessions one after another in one process, then misuse of the API."""
import sys

import torch

import dynrec


@torch.compile(backend="eager")
def first(x):
    return x + 1


@torch.compile(backend="eager")
def second(x):
    return x * 3


p1 = dynrec.start(sys.argv[1])
first(torch.ones(2))
try:
    dynrec.start(sys.argv[2])
except dynrec.RecordingError as exc:
    print("second start refused:", "recording already" in str(exc))
print("stop 1:", dynrec.stop() == p1)
print("stop again:", dynrec.stop())
with dynrec.record(sys.argv[2]):
    second(torch.ones(2))
    second(torch.ones(2, 2))
try:
    with dynrec.record(sys.argv[3]):
        first(torch.ones(7))
        raise KeyError("from the block")
except KeyError as exc:
    print("the block's exception:", exc)
print("done")
