"""A module-level function under @functools.lru_cache, called inside a
compiled function (PyTorch's test_functions inlines one with default
arguments): a global of the frame, by reference."""
import functools

import torch


@functools.lru_cache
def cached_sin(x, y, _=None):
    return torch.sin(x * y)


@functools.lru_cache(maxsize=4)
def factor(n):
    return n * 2


@torch.compile(backend="eager")
def fn(a, b):
    return cached_sin(a, 2, b) + factor(3)


print(fn(torch.ones(2), None))
print(fn(torch.ones(3), None))
