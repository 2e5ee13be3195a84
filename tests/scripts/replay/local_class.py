"""Classes defined inside functions, as PyTorch's own tests define them: an
nn.Module whose forward is compiled (train/eval recompile), and a plain
state object passed to a compiled function, both from a test method; a
mapping whose base the test method imports itself; a dataclass with
field(default_factory=...) and a dataclass base beside it, which the
compiled function constructs; a frozen dataclass whose field's default is
made by a call; a class whose subclasses beside it the compiled function
lists."""
from dataclasses import dataclass, field
from typing import Dict

import torch
from torch._dynamo.source import ConstantSource  # noqa: F401

# (ConstantSource: a module-level dataclass of torch's, whose __init__ has
# the file, qualname and first line of every dataclass's __init__)


class Case:
    def test_module(self):
        scale = 2.0

        class Block(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(4, 4)
                self.drop = torch.nn.Dropout(0.5)

            def forward(self, x):
                return self.drop(self.lin(x)) * scale

        m = torch.compile(Block(), backend="eager")
        x = torch.ones(2, 4)
        m.eval()
        m(x)
        m.train()
        m(x)

    def test_state(self):
        class State:
            def __init__(self, k):
                self.k = k

        def f(x, st):
            return x * st.k

        cf = torch.compile(f, backend="eager")
        cf(torch.ones(3), State(2))
        cf(torch.ones(3), State(3))

    def test_mapping(self):
        from collections.abc import MutableMapping

        class TensorDict(MutableMapping):
            def __init__(self):
                self._dict = {}

            def __getitem__(self, key):
                return self._dict[key]

            def __setitem__(self, key, value):
                self._dict[key] = value

            def __delitem__(self, key):
                del self._dict[key]

            def __iter__(self):
                return iter(self._dict)

            def __len__(self):
                return len(self._dict)

        d = TensorDict()
        d["a"] = torch.ones(4) * 2

        def f(x, d):
            return x * d["a"] + len(d)

        torch.compile(f, backend="eager")(torch.ones(4), d)

    def test_output(self):
        @dataclass
        class Base:
            origin: int = 0

        @dataclass
        class Output(Base):
            scalar: int = 2
            named: Dict[str, torch.Tensor] = field(default_factory=dict)

        def fn(x):
            a, b, c = Output(1), Output(5, named={"x": x}), Output()
            c.named["y"] = x
            if isinstance(a.named, dict) and not a.named:
                x = torch.sin(x)
            return x + a.origin + a.scalar + b.scalar + c.scalar, c

        print(torch.compile(fn, backend="eager")(torch.ones(2))[1].scalar)


    def test_default_made_by_a_call(self):
        # A frozen dataclass whose field's default a call made (not a
        # literal): the replay's class has the field, its default the
        # recorded one; a field whose default_factory is a lambda.
        @dataclass(frozen=True)
        class Nested:
            x: int = 2

        @dataclass(frozen=True)
        class Holder:
            y: torch.Tensor
            ndc: Nested = Nested()
            z: list = field(default_factory=lambda: [5])

        def fn(y):
            dc = Holder(y)
            return dc.y + dc.ndc.x + dc.z[0], dc

        print(torch.compile(fn, backend="eager")(torch.ones(2))[0])


    def test_subclasses(self):
        # Foo.__subclasses__() of classes defined beside it: Dynamo guards
        # each subclass by identity, in order.
        class Foo:
            pass

        class Bar(Foo):
            pass

        class Baz(Foo):
            pass

        def fn(x):
            return x + len(Foo.__subclasses__())

        print(torch.compile(fn, backend="eager", fullgraph=True)(torch.ones(2)))


Case().test_module()
Case().test_state()
Case().test_mapping()
Case().test_output()
Case().test_default_made_by_a_call()
Case().test_subclasses()
print("done")
