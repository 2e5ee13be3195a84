"""Nested functions under @torch._dynamo.disable that a compiled function
calls (PyTorch's test_functions: test_reconstructed_name): the wrapper's
closure holds Dynamo's DisableContext; one with a reason, one without
functools.wraps."""
import torch


def run():
    seen = []

    @torch._dynamo.disable
    def disallowed(g):
        seen.append(g.__name__)

    quiet = torch._dynamo.disable(lambda t: t.sum().item(), reason="host sync", wrapping=False)

    def f(t):
        def g():
            return ()

        disallowed(g)
        return t + quiet(t)

    opt_f = torch.compile(f, backend="eager")
    print(opt_f(torch.ones(3)), seen)


run()
