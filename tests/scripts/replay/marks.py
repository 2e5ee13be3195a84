"""Every Dynamo mark on a tensor recompiles a frame: mark_dynamic,
maybe_mark_dynamic, mark_static, and the _has_dynamo_dim_marking flag they
all set (its guard fails when a marked tensor meets an entry compiled for an
unmarked one)."""
import torch


def f(x):
    return x * 2


cf = torch.compile(f, backend="eager")
cf(torch.ones(3))
y = torch.ones(4)
torch._dynamo.mark_dynamic(y, 0)
cf(y)
z = torch.ones(5)
torch._dynamo.maybe_mark_dynamic(z, 0)
cf(z)
w = torch.ones(6, 2)
torch._dynamo.mark_static(w, 1)
cf(w)
print("done")
