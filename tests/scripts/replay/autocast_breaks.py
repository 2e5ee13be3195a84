"""Graph breaks inside `with torch.autocast(dtype=...)`: the resume
functions Dynamo makes hold the dtype as a constant, which marshal refuses,
so the trace cannot store their code; the replay uses the ones its own
Dynamo makes.  The second break is inside a call, then again with nested
graph breaks (a resume function handed to the outer one)."""
import torch


def fn(x):
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        x = torch.mm(x, x)
        torch._dynamo.graph_break()
        x = torch.relu(x)
    return x


def gn(x, y):
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        z = torch.mm(x, y)
        torch._dynamo.graph_break()
        return torch.sin(z)


def outer(x, y):
    z = torch.mm(x, y)
    return z + gn(x, y)


x = torch.rand(4, 4)
print(torch.compile(fn, backend="eager")(x).dtype)
print(torch.compile(outer, backend="eager")(x, x).dtype)
# As Dynamo's own tests run (torch/_dynamo/test_case.py): gn's resume
# function is handed to outer's as an argument.
torch._dynamo.config.nested_graph_breaks = True
torch._dynamo.reset()
print(torch.compile(outer, backend="eager")(x, x).dtype)
