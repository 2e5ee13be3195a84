"""replay scenario: one frame takes an argument of a type the capture does not
support (a lock), so it is not replayable; the other frame is."""

import threading

import torch


@torch.compile(backend="eager")
def with_lock(x, lock):
    return x + 1


@torch.compile(backend="eager")
def plain(x):
    return x * 2


lock = threading.Lock()
print(with_lock(torch.ones(2), lock).tolist())
print(plain(torch.ones(2)).tolist())
