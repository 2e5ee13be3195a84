"""Eight threads at once: four call one compiled function on a fixed shape
(cache hits), four call another on changing shapes (recompiles, guard
failures against other threads' entries).  Prints how often each function
ran, which the trace's counts must match."""

import sys
import threading

import torch
import torch._dynamo

HITS = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
SHAPES = (2, 3, 4, 5, 6)
PER_SHAPE = 40


@torch.compile(backend="eager")
def steady(x):
    return x * 2 + 1


@torch.compile(backend="eager")
def shifting(x):
    return x.sum() - 1


calls = {"steady": 0, "shifting": 0}
lock = threading.Lock()


def settings():
    # Dynamo's config is per thread.  Threads racing to compile the same
    # shape can compile it twice: a high limit keeps every call compiled.
    torch._dynamo.config.automatic_dynamic_shapes = False
    torch._dynamo.config.recompile_limit = 64
    torch._dynamo.config.accumulated_recompile_limit = 1024


def hitter():
    settings()
    x = torch.ones(4)
    for _ in range(HITS):
        steady(x)
    with lock:
        calls["steady"] += HITS


def recompiler(k):
    settings()
    n = 0
    for s in SHAPES[k % 2::2] + SHAPES:
        x = torch.ones(s)
        for _ in range(PER_SHAPE):
            shifting(x)
            n += 1
    with lock:
        calls["shifting"] += n


threads = [threading.Thread(target=hitter) for _ in range(4)]
threads += [threading.Thread(target=recompiler, args=(k,)) for k in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("steady", calls["steady"])
print("shifting", calls["shifting"])
