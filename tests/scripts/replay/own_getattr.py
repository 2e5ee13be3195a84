"""replay scenario: a dict subclass with a __getattr__ of its own (a config
read by attribute, as PyTorch's test_misc test_user_getattr1 has) given to
a compiled function: capture never calls it (it asked for `name` and
failed: not replayable), and what it was asked is the program's."""

import torch

asked = []


class MyConfig(dict):
    def __getattr__(self, name):
        asked.append(name)
        return self[name]


@torch.compile(backend="eager")
def fn(cfg, x):
    return x + cfg.offset


print(fn(MyConfig(offset=5), torch.ones(3)).tolist())
print("asked", asked)
