"""A config change around a compile the replay cannot replay (its argument
is a generator): the replay sets that compile's config all the same, so
the next compile's config changes are the recorded ones."""
import torch


def f(x):
    return x + 1


def g(x, extra):
    return x - 1


torch._dynamo.config.capture_scalar_outputs = True
torch.compile(f, backend="eager")(torch.ones(2))
torch._dynamo.config.capture_scalar_outputs = False
torch.compile(g, backend="eager")(torch.ones(3), (i for i in range(3)))
torch._dynamo.config.capture_scalar_outputs = True
torch.compile(f, backend="eager")(torch.ones(4, 2))
