"""Instances of the program's own subclasses of dict and OrderedDict
(PyTorch's test_modules: test_inject_module_parameters puts a ZeRO-style
OrderedDict subclass, defined inside the test, in place of each module's
_parameters; a dict subclass with attributes as an argument), and a
recompile when an item changes."""
import collections

import torch


class Params(dict):
    """A dict with an attribute of its own."""

    def __init__(self, *args, scale=1.0, **kwargs):
        super().__init__(*args, **kwargs)
        self.scale = scale


def run():
    class ZeROOrderedDict(collections.OrderedDict):
        def __init__(self, parent_module=None, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self._parent_module = parent_module

        def __getitem__(self, key):
            return super().__getitem__(key)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 4)
            self.out = torch.nn.Linear(4, 2)

        def forward(self, x):
            return self.out(torch.relu(self.fc(x)))

    torch.manual_seed(0)
    net = Net()
    for m in net.modules():
        new = ZeROOrderedDict(parent_module=m)
        for k, p in m._parameters.items():
            new[k] = p
        m._parameters = new
    cnet = torch.compile(net, backend="eager")
    print(cnet(torch.ones(3, 4)).shape)

    @torch.compile(backend="eager")
    def f(x, p):
        return x * p["w"] + p.scale

    p = Params(w=2.0, scale=0.5)
    print(f(torch.ones(2), p))
    p["w"] = 3.0
    print(f(torch.ones(2), p))


run()
