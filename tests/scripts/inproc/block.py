"""Records one block with dynrec.record, in a process that compiled before
it and compiles again after it: the trace holds the block's compiles only."""
import sys

import torch

import dynrec


@torch.compile(backend="eager")
def early(x):
    return x.sin() + 1


@torch.compile(backend="eager")
def inside(x):
    return x.cos() * 2


@torch.compile(backend="eager")
def later(x):
    return x - 1


early(torch.ones(3))                      # before start: not in the trace
with dynrec.record(sys.argv[1]) as path:
    early(torch.ones(3))                  # a cache hit of an earlier entry
    early(torch.ones(3, 4))               # a recompile of an earlier entry
    inside(torch.ones(5))                 # a first compile
    inside(torch.ones(5))                 # a cache hit
print("recorded", path is not None, dynrec.recording())
later(torch.ones(2))                      # after stop: not in the trace
print("done")
