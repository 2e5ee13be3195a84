"""A functools.wraps wrapper from another module, passed to a compiled
frame: replay must rebuild it with that module's globals, not those its
__module__ names."""
import torch

from wrapmod import shifted


def act(x):
    return x.sin()


# Not reachable by name: wraps made its __module__ "__main__" and its
# __qualname__ "act", and __main__.act is not the wrapper.
acts = [shifted(act)]


def f(x, fn):
    return fn(x) * 2


cf = torch.compile(f, backend="eager")
cf(torch.ones(3), acts[0])
cf(torch.ones(4, 2), acts[0])
print("done")
