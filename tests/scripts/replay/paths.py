"""replay scenario: pathlib paths in a module's attributes (a cache
directory the forward reads, a list of pure paths), and one as an argument."""
import pathlib

import torch


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)
        self.cache_dir = pathlib.Path("/tmp/cache") / "m"
        self.names = [pathlib.PurePosixPath("a/b.txt")]

    def forward(self, x):
        if self.cache_dir.name == "m":
            x = x + 1
        return self.lin(x)


print(torch.compile(M(), backend="eager")(torch.ones(2, 3)).shape)


@torch.compile(backend="eager")
def suffix_scale(x, p):
    return x * len(p.suffix)


print(suffix_scale(torch.ones(2), pathlib.PurePosixPath("data/weights.bin")))
