"""Failing pytest tests around torch.compile: a wrong result, an error in the
traced code, a backend that raises.  Run by tests/test_identical.c as
`python -m pytest` and `dynrec run -m pytest`: the reports must be equal."""
import torch


def double(x):
    return x * 2


def test_compiled_double_is_wrong():
    f = torch.compile(double, backend="eager")
    assert f(torch.ones(2)).tolist() == [3.0, 3.0]


def test_compile_raises():
    def bad(x):
        return x.no_such_method()
    f = torch.compile(bad, backend="eager")
    f(torch.ones(2))


def broken_backend(gm, example_inputs):
    raise RuntimeError("this backend cannot compile anything")


def test_backend_fails():
    f = torch.compile(double, backend=broken_backend)
    f(torch.ones(3))
