"""replay scenario: a backend function defined inside a function, one per
call, as a test defines one: Dynamo guards the backend's identity, so the
second function's compile is a recompile (BACKEND_MATCH)."""

import torch


def fn(x):
    return x + 1


def run():
    graphs = []

    def debug_compiler(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    opt = torch.compile(fn, backend=debug_compiler)
    opt(torch.ones(2))
    return len(graphs)


print(run(), run())
