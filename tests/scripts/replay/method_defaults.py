"""The defaults of a method of a class of the program, patched while it
runs: Dynamo guards the default tensor, and the patch recompiles (PyTorch's
test_functions, test_meth_default_tensor_args)."""
from unittest.mock import patch

import torch


class WithDefaults(torch.nn.Module):
    def forward(self, x=torch.zeros((2, 2)), *, kw_x=torch.zeros((1, 2))):
        x.add_(1)
        kw_x.add_(1)
        return x, kw_x


class Wrapper(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.m = WithDefaults()

    def forward(self):
        return self.m()


def main():
    mod = Wrapper()
    compiled = torch.compile(mod, backend="eager")
    print(compiled()[0].sum())
    with patch.object(WithDefaults.forward, "__defaults__", (torch.ones((3, 4, 5)),)):
        print(compiled()[0].shape)
    with patch.object(WithDefaults.forward, "__kwdefaults__", {"kw_x": torch.ones((2, 3))}):
        print(compiled()[1].shape)


main()
