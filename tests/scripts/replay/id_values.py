# Ints that are id() of other values of the frame: a module's id passed
# beside it (the graph depends on `id(self) == ref_id`), the id of another
# module (not among the frame's values: a plain int), and an object that
# holds its own id.
import torch


class M(torch.nn.Module):
    def forward(self, x, ref_id):
        if id(self) == ref_id:
            return torch.mul(x, 1.0)
        return torch.mul(x, 0)


class Holder:
    def __init__(self):
        self.me = id(self)


def g(o, x):
    if id(o) == o.me:
        return x + 1
    return x - 1


x = torch.ones(2)
m1 = M()
opt_m1 = torch.compile(m1, backend="eager", fullgraph=True)
print(opt_m1(x, id(m1)), opt_m1(x, id(m1)))
m2 = M()
print(torch.compile(m2, backend="eager", fullgraph=True)(x, id(m1)))
print(torch.compile(g, backend="eager")(Holder(), x))
