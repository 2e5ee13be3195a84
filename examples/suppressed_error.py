"""suppressed_error.py -- a failing backend whose error Dynamo suppresses.

With torch._dynamo.config.suppress_errors = True, a backend that raises
makes Dynamo fall back to running the frame eagerly; the program's output
is the same as without torch.compile.  What its trace should show: a
v_errors row with suppressed = 1 naming the backend's RuntimeError, and
v_graphs naming the backend `broken_backend`.
"""

import logging

import torch
import torch._dynamo

torch._dynamo.config.suppress_errors = True
# Dynamo logs the suppressed error as a warning with a traceback; keep
# stderr free of it so that the output is exactly the program's.
logging.getLogger("torch._dynamo").setLevel(logging.CRITICAL)


def broken_backend(gm, example_inputs):
    raise RuntimeError("broken_backend refuses every graph")


@torch.compile(backend=broken_backend)
def f(x):
    return torch.relu(x) * 3


def main():
    for i in range(3):
        x = torch.arange(-2, 3, dtype=torch.float32) + i
        print(i, f(x).tolist())


if __name__ == "__main__":
    main()
