# Closure cells a function shares with the methods of a class defined beside
# it (nonlocal x written by one, read by the other; a list both append to):
# one cell in the program, one in the replay.
import contextlib

import torch


def test_shared():
    x = 0

    def inc_x():
        nonlocal x
        x += 1

    class MyObj:
        def inc_x_then_return_x(self, fn):
            fn()
            return x

    @torch.compile(backend="eager")
    def root(t):
        obj = MyObj()
        res = obj.inc_x_then_return_x(inc_x)
        return t + 1, res

    return root(torch.zeros(1))


def test_captured():
    captured = []

    class Bar:
        @staticmethod
        def forward(y):
            captured.append(y)
            return y * 2

    @torch.compile(backend="eager")
    def fn(y):
        out = Bar.forward(y)
        return out + len(captured)

    return fn(torch.ones(2))


def test_through_a_method_cell():
    # A local both a method and a function in another of the method's cells
    # close over (backward reads `state` and calls set_mode, which writes
    # it): the function is made while the class is given its cells.
    class State:
        def __init__(self):
            self.mode = "default"

    state = State()

    @contextlib.contextmanager
    def set_mode(mode):
        old = state.mode
        state.mode = mode
        try:
            yield
        finally:
            state.mode = old

    class Foo(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            with set_mode("special"):
                if state.mode == "special":
                    return grad * 2.0
                return grad

    def fn(x):
        return Foo.apply(x).sum()

    x = torch.ones(4, requires_grad=True)
    torch.compile(fn, backend="eager", fullgraph=True)(x).backward()
    return x.grad


print(test_shared(), test_captured(), test_through_a_method_cell())
