"""Read-only views of dicts (types.MappingProxyType) as arguments, one over
a dict the frame also gets, and the mappingproxy class itself in a closure
(PyTorch's test_dicts: test_mapping_proxy_existing*, test_dict_view_mapping)."""
import types

import torch


@torch.compile(backend="eager")
def total(x, mp):
    return x + mp["a"] * len(mp)


@torch.compile(backend="eager")
def shared(x, d, mp):
    d["b"] = 2
    return x * mp["b"]


def main():
    d = {"a": 1, "c": 3}
    print(total(torch.ones(2), types.MappingProxyType(d)))
    d["a"] = 5
    print(total(torch.ones(2), types.MappingProxyType(d)))
    e = {"b": 1}
    print(shared(torch.ones(2), e, types.MappingProxyType(e)), e)

    mappingproxy = type(type.__dict__)

    @torch.compile(backend="eager")
    def is_view(x, m):
        return x + 1 if isinstance(m, mappingproxy) else x - 1

    print(is_view(torch.ones(2), types.MappingProxyType({})))


main()
