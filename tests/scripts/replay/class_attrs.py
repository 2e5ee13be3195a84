"""Class attributes that are computed, not literals (a tensor made in the
class body, a count from len()): the stored definitions do not run those
statements, so the captured values stand in for them."""
import torch

NAMES = ("a", "b", "c")


class Scaler(torch.nn.Module):
    table = torch.arange(4.0) * 2
    width = len(NAMES)

    def forward(self, x):
        return x * self.table[: x.shape[0]] + self.width


def test_case():
    class Holder:
        y = torch.ones(4) * 3
        limit = max(NAMES)

        def __init__(self):
            self.x = torch.randn(4)

    def fn(h):
        return h.x + h.y if h.limit == "c" else h.x

    return torch.compile(fn, backend="eager")(Holder())


test_case()
torch.compile(Scaler(), backend="eager")(torch.ones(3))
print("done")
