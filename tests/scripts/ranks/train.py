# One rank of a torchrun job, without torchrun: RANK and WORLD_SIZE come
# from the environment, and torch's fake process group stands in for the
# other ranks, so a compiled all_reduce is traced (and recorded) as it is
# under torchrun.  The rank named by DIVERGE_RANK calls the compiled step
# with a second shape: a recompile, and its collectives, only it has.
import os

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as fc
from torch.testing._internal.distributed.fake_pg import FakeStore

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
dist.init_process_group("fake", store=FakeStore(), rank=rank, world_size=world)


@torch.compile(backend="eager")
def step(x):
    y = fc.all_reduce(x * 2, "sum", dist.group.WORLD)
    return y + 1


step(torch.ones(4))
step(torch.ones(4))
if str(rank) == os.environ.get("DIVERGE_RANK"):
    step(torch.ones(7))
dist.destroy_process_group()
