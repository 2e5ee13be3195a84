"""gc_schedule.py -- when the cyclic collector runs: the same under dynrec.

Forty compiles of one function (a recompile for each int argument) with the
collector on, counting its collections per generation.  Recording builds
events, value trees and torch's structured-trace records for each compile;
none of that may bring the program's collections forward
(recorder/pycompat.c), so the counts printed match plain python's."""

import gc

import torch


def f(x, k):
    return torch.relu(x) * k + x.sin()


cf = torch.compile(f, backend="eager", dynamic=False)
cf(torch.ones(3), 0)  # the first compile imports the rest of Dynamo
torch._dynamo.config.recompile_limit = 100
runs = [0, 0, 0]


def count(phase, info):
    if phase == "start":
        runs[info["generation"]] += 1


gc.callbacks.append(count)
for k in range(1, 40):
    cf(torch.ones(3), k)
gc.callbacks.remove(count)
print("collections by generation", runs)
