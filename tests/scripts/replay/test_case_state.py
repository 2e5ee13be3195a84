"""A unittest.TestCase whose compiled closure reads the test object, as
PyTorch's own tests do: the runner's private state on it (unittest's
_outcome, here also a lock) cannot be captured and is left out, and the
test method wrapped and bound to the object as its own attribute (torch's
TestCase does so with its policy wrapper) is bound again."""
import functools
import threading
import types
import unittest

import torch


def policy(fn):
    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        return fn(self, *args, **kwargs)

    return wrapper


class T(unittest.TestCase):
    def setUp(self):
        self._lock = threading.Lock()
        name = self._testMethodName
        setattr(self, name, types.MethodType(policy(getattr(type(self), name)), self))

    def test_sin(self):
        self.scale = 2.0

        def fn(x):
            return x.sin() + self.scale

        torch.compile(fn, backend="eager")(torch.randn(3))


if __name__ == "__main__":
    unittest.main()
