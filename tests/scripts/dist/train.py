"""A torchrun job on the CPU (gloo): every rank compiles the same step, with
a collective inside the graph; with `diverge`, rank 1 alone also calls a
compiled function with a second shape (a recompile the others lack)."""
import os
import sys

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()


@torch.compile(backend="eager")
def step(x):
    y = x * 2
    dist.all_reduce(y)
    return y + 1


@torch.compile(backend="eager")
def local(x):
    return x.sin()


out = step(torch.ones(4))
local(torch.ones(3))
if len(sys.argv) > 1 and sys.argv[1] == "diverge" and rank == 1:
    local(torch.ones(3, 2))
dist.barrier()
# One write(2) per rank: the ranks share torchrun's stdout.
os.write(1, ("rank %d sum %s\n" % (rank, out.sum().item())).encode())
dist.destroy_process_group()
