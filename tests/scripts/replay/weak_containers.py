import weakref

import torch

_cache = weakref.WeakKeyDictionary()
_names = weakref.WeakValueDictionary()


class Holder:
    pass


def test_weak():
    mod1 = torch.nn.Linear(2, 2)
    mod2 = torch.nn.Linear(2, 2)
    states = weakref.WeakKeyDictionary()
    states[mod1] = 2
    seen = weakref.WeakSet([mod2])
    h = Holder()
    r = weakref.ref(h)
    gone = weakref.ref(Holder())

    @torch.compile(backend="eager", fullgraph=True)
    def fn(x):
        if mod1 in states:
            x = torch.sin(x) * states[mod1]
        if mod2 in states:
            x = torch.cos(x)
        if mod2 in seen:
            x = x + 1
        if r() is not None:
            x = x * 3
        if gone() is None:
            x = x - 1
        if mod1 in _cache:
            x = x + _cache[mod1]
        return x

    fn(torch.randn(4))
    _cache[mod1] = 5
    states[mod2] = 3
    fn(torch.randn(4))
    return h


test_weak()
