"""A module whose import names one thing the replay's torch lacks (a test
file of a newer torch: imported by missing_name.py)."""
from torch.testing._internal.common_utils import (
    dynrec_test_name_torch_lacks,  # noqa: F401
    parametrize,
)


class Scaled:
    @parametrize("k", [2])
    def scale(self, x, k=2):
        return x * k


def f(x, s):
    return s.scale(x)
