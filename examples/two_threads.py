"""two_threads.py -- two threads calling one compiled function.

Each thread makes CALLS calls of `mix` on an input of its own size.  With
automatic_dynamic_shapes off, each size is compiled exactly once whichever
thread gets there first, so the run is deterministic: each thread's first
call misses the cache and goes through Dynamo's callback, the rest hit it.
What its trace should show: callback events for `mix` from both threads
(v_ev.thread), two compiles of `mix` in v_compiles, and v_frames for `mix`
with cache_hits = 2 * CALLS - 2.
"""

import threading

import torch
import torch._dynamo

torch._dynamo.config.automatic_dynamic_shapes = False

CALLS = 50


@torch.compile(backend="eager")
def mix(x):
    return torch.tanh(x) * 0.5 + 0.25


def worker(size, out):
    # Dynamo's config is per thread: the setting above holds for the main
    # thread only, and without this line the second size to arrive would be
    # compiled dynamic or static depending on which thread came first.
    torch._dynamo.config.automatic_dynamic_shapes = False
    x = torch.full((size,), float(size))
    for _ in range(CALLS):
        x = mix(x)
    out[size] = round(float(x.sum()), 6)


def main():
    out = {}
    threads = [threading.Thread(target=worker, args=(size, out)) for size in (3, 5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for size in sorted(out):
        print(size, out[size])


if __name__ == "__main__":
    main()
