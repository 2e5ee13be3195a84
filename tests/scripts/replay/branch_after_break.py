# A data-dependent branch after a graph break: Dynamo makes two resume
# functions of one name and line (torch_dynamo_resume_in_f_at_8), one per
# branch.  Also: calls of an imported module's functions, whose bytecode
# the compiler chooses by what the whole file imports.
import torch


@torch.compile(backend="eager")
def f(x):
    y = x * 2
    torch._dynamo.graph_break()
    if y.sum() > 0:
        return torch.add(y, 1)
    return torch.sub(y, 1)


print(f(torch.ones(3)))
print(f(-torch.ones(3)))
