"""backend_raises.py -- a custom backend that raises, errors not suppressed.

The user sees torch._dynamo.exc.BackendCompilerFailed; the script catches it
and prints its type name, so it exits 0.  What its trace should show: a
v_errors row with suppressed = 0 (BackendCompilerFailed), and a v_graphs row
whose backend is the user's `exploding_backend`.
"""

import torch
import torch._dynamo


def exploding_backend(gm, example_inputs):
    raise RuntimeError("exploding_backend cannot compile this")


@torch.compile(backend=exploding_backend)
def f(x):
    return torch.sin(x) + 1


def main():
    try:
        f(torch.ones(3))
        print("no error")
    except torch._dynamo.exc.BackendCompilerFailed as exc:
        print("caught", type(exc).__name__)


if __name__ == "__main__":
    main()
