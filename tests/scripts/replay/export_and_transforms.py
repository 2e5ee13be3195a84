"""torch._dynamo.export of a module, as PyTorch's own tests export one:
Dynamo traces it for export, whose guards are not torch.compile's (the
tensor's sizes as lambda guards, no TENSOR_MATCH); and a compiled function
called inside torch.func.jvp, whose tensors are the transform's dual
tensors, which the replay does not make."""
import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return x + 1


torch._dynamo.export(Model(), aten_graph=True)(torch.randn(1, 1, 2, 2))


def fn(x, y):
    return x * y + 1


torch.func.jvp(torch.compile(fn, backend="eager"),
               (torch.ones(5), torch.zeros(5)), (torch.ones(5), torch.ones(5)))
print("done")
