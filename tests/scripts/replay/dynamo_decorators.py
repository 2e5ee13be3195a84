"""replay scenario: Dynamo's decorator objects reached through the program's
functions: torch._dynamo.disable, error_on_graph_break and set_stance
wrappers, whose closures hold the context objects; a compile under
error_on_graph_break(True) that traces no op (compiled empty, not skipped);
assume_constant_result on the property of a class defined in a function."""

import torch


@torch._dynamo.error_on_graph_break(False)
def tolerant(x):
    torch._dynamo.graph_break()
    return x + 1


@torch._dynamo.disable
def eager_only(x):
    return x * 3


@torch.compiler.set_stance("force_eager")
def forced(f, x):
    return f(x)


@torch.compile(backend="eager")
def outer(x):
    return tolerant(x) + eager_only(x)


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)

    def forward(self, x):
        return self.lin(x).relu()


@torch._dynamo.error_on_graph_break(True)
@torch.compile(backend="eager")
def constant():
    return 1


def marked_constant_property():
    class WithId(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self._cached_id = None

        @property
        def cached_id(self):
            if self._cached_id is None:
                self._cached_id = 42
            return self._cached_id

        def forward(self, x):
            return x * self.cached_id

    torch._dynamo.assume_constant_result(WithId.cached_id.fget)
    return torch.compile(WithId(), backend="eager", fullgraph=True)(torch.ones(3))


@torch.compile(backend="eager")
def uses_disabled_module(m, x):
    return m(x) * 2


print(outer(torch.ones(3)).tolist())
m = Block()
m.lin = torch._dynamo.disable(m.lin)
print(uses_disabled_module(m, torch.ones(3)).shape)
print(forced(outer, torch.ones(2)).tolist())
print(constant(), marked_constant_property().tolist())
