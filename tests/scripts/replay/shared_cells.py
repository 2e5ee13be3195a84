# Closure cells a function shares with the methods of a class defined beside
# it (nonlocal x written by one, read by the other; a list both append to):
# one cell in the program, one in the replay.
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


print(test_shared(), test_captured())
