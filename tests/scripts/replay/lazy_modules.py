"""Lazy modules compiled before their first call (PyTorch's test_modules:
LazyMLP, test_lazy_module1): their UninitializedParameter and
UninitializedBuffer, and the load hook torch wraps (_WrappedHook), which
holds the module by weakref; a second call after they initialized."""
import torch


class LazyMLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.LazyLinear(10)
        self.relu1 = torch.nn.ReLU()
        self.fc2 = torch.nn.LazyLinear(1)
        self.bn = torch.nn.LazyBatchNorm1d()

    def forward(self, x):
        return self.fc2(self.relu1(self.bn(self.fc1(x))))


torch.manual_seed(0)
m = LazyMLP()
cm = torch.compile(m, backend="eager")
print(cm(torch.ones(4, 5)).shape)
print(cm(torch.ones(4, 5)).shape)
