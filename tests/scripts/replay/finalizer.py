"""An object whose class has a finalizer: rebuilt from recorded state it
would run __del__ on that state when the replay drops it, so a replay
without --trust leaves its frame out (a trace may name any such class)."""
import torch


class Handle:
    def __init__(self, k):
        self.k = k

    def __del__(self):
        with open("finalized.log", "a") as f:
            f.write("%s\n" % self.k)


def f(x, h):
    return x * h.k


h = Handle(2)
torch.compile(f, backend="eager")(torch.ones(3), h)
del h  # finalized here, while open() still exists
print("done")
