# Classes defined inside a function and read by a function defined beside
# them: Foo's own methods make Foo objects through the cell they share with
# fn (one cell in the program); Mock's class attribute is made by a call
# of another local class, which its definitions do not run.
import contextlib

import torch


def test_shared_cell():
    class Foo:
        def __init__(self, val):
            super().__init__()
            self.val = val

        def __add__(self, other):
            return Foo(self.val + other.val)

        def __mul__(self, other):
            return Foo(self.val * other.val)

    def fn(a, b, c):
        return (Foo(a) + Foo(b) * Foo(c)).val

    return torch.compile(fn, backend="eager")(torch.ones(2), torch.ones(2), torch.ones(2))


def test_class_attribute_made_by_a_call():
    class Foo:
        x = 5

    class Mock:
        class_variable = Foo()

        @classmethod
        def get(cls):
            return cls.class_variable.x

        def run(self, x):
            return self.get() * x

    def run_mock(x):
        return Mock().run(x)

    return torch.compile(run_mock, backend="eager", fullgraph=True)(torch.ones(2))


def test_class_inside_a_with_block():
    # A class defined under a with statement of the test (torch's tests
    # define models under `with freeze_rng_state():`).
    with contextlib.nullcontext():

        class TestModel(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.linears = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 2))

            def forward(self, x):
                return self.linears[:-1](x)

        return torch.compile(TestModel(), backend="eager")(torch.ones(2, 2)).shape


print(test_shared_cell(), test_class_attribute_made_by_a_call(), test_class_inside_a_with_block())
