"""Test methods under torch's own make_dynamo_test, as PyTorch's Dynamo
tests use it: the compiled frame is `dummy`, a function defined inside the
library's make_dynamo_test, and the test method reaches it behind the
functools.wraps wrapper that make_dynamo_test returns.  The replay finds
both codes in the installed torch by the code's own qualname, so it needs
no code stored compiled in the trace (no --trust)."""
import torch
from torch.testing._internal.common_utils import make_dynamo_test


class Case:
    scale = 2.0

    def __init__(self):
        # A wrapper make_dynamo_test returns, among the frame's values
        # (through the test's self): functools.wraps named it Case.check,
        # which is not it.
        self.again = make_dynamo_test(Case.check)

    def check(self):
        return self.scale

    @make_dynamo_test
    def test_sin(self):
        x = torch.ones(3)
        assert bool(((x.sin() + 1) * self.scale).sum() > 0)

    @make_dynamo_test
    def test_list(self):
        items = [torch.ones(2), torch.zeros(2)]
        items.append(items[0] + items[1])
        assert len(items) == 3


Case().test_sin()
Case().test_list()
print("done")
