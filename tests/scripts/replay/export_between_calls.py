import torch
import torch._dynamo
import torch._dynamo.testing


def f(x):
    b = x.sin()
    assert x.dtype == torch.float32
    return x.cos() + b


args = (torch.Tensor([3, 4, 5]),)
exported, _ = torch._dynamo.export(f, torch.Tensor([3, 4, 5]))
cnt = torch._dynamo.testing.CompileCounter()
opt_f = torch._dynamo.optimize(cnt, nopython=True)(f)
print(opt_f(*args))
exported, _ = torch._dynamo.export(f, torch.Tensor([4, 4, 5]))
print(opt_f(torch.ones(4)))
