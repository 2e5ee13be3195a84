"""A nested function that reads its own attribute through its closure (it
holds itself): Dynamo guards fn.pred, and the change recompiles."""
import torch


def run():
    def fn(x):
        if fn.pred:
            return torch.relu(x * 2)
        return torch.abs(x + fn.offset)

    t = torch.ones(3)
    fn.pred, fn.offset = True, 3
    print(torch.compile(fn, fullgraph=True, backend="eager")(t))
    fn.pred = False
    print(torch.compile(fn, fullgraph=True, backend="eager")(t))


run()
