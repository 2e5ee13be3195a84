# Compiles 38 times (a trace of a few MB, all in its WAL at the end), then
# fills the disk of FILL_DIR, leaving FILL_LEAVE bytes free for dynrec's
# close.  The program handles its own ENOSPC: its output and exit status
# are the same with or without dynrec.
import os

import torch

torch._dynamo.config.recompile_limit = 1000
torch._dynamo.config.automatic_dynamic_shapes = False


@torch.compile(backend="eager")
def f(x, n):
    return x * n + x.sum()


for i in range(2, 40):
    f(torch.randn(i, 3), i)
print("done")

leave = int(os.environ["FILL_LEAVE"])
path = os.path.join(os.environ["FILL_DIR"], "ballast")
with open(path, "wb") as b:
    try:
        while True:
            b.write(b"\0" * 4096)
            b.flush()
    except OSError:
        pass
    try:
        os.truncate(path, max(0, os.path.getsize(path) - leave))
    except OSError:
        pass
