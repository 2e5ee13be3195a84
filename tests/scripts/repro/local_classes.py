"""Classes defined inside a test method, as PyTorch's own Dynamo tests
define them: a plain state object whose base class is defined beside it,
and a frozen dataclass with a default and a field(default_factory=...);
the compiled function reads a variable of the method too.  The second
call recompiles on both."""
import dataclasses

import torch


class T:
    def test_x(self):
        offset = 1.0

        class Base:
            def scaled(self):
                return self.k * 2

        class State(Base):
            def __init__(self, k):
                self.k = k

        @dataclasses.dataclass(frozen=True)
        class Pair:
            a: torch.Tensor
            b: float = 0.5
            tags: list = dataclasses.field(default_factory=list, repr=False)

        def f(x, st, p):
            return x * st.scaled() + p.a * p.b + offset

        cf = torch.compile(f, backend="eager")
        cf(torch.ones(3), State(2), Pair(torch.ones(3)))
        cf(torch.ones(3), State(3), Pair(torch.ones(3), 1.5))


T().test_x()
print("done")
