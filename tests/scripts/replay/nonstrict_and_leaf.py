"""Functions marked nonstrict_trace and leaf_function, at module level and
inside a function: Dynamo keeps each wrapper in a registry of its own, by id (PyTorch's test_decorators,
test_nonstrict_trace_* and test_leaf_function_*)."""
import torch
from torch._dynamo.decorators import leaf_function


@torch._dynamo.nonstrict_trace
def trace_me(x, y, z):
    torch._dynamo.graph_break()
    return x * y + z


def fn(x, y):
    t0 = x + 1
    t1 = trace_me(x, y, t0)
    return t1 * 2


@leaf_function
def stats(x):
    return (x.mean(dim=1),)


@stats.register_fake
def stats_fake(x):
    return (x.new_empty(x.shape[0]),)


def gn(x):
    return stats(x * 2)[0] + 1


def main():
    x, y = torch.randn(3), torch.randn(3)
    print(torch.compile(fn, fullgraph=True, backend="aot_eager")(x, y).shape)
    print(torch.compile(gn, fullgraph=True, backend="aot_eager")(torch.randn(4, 5)).shape)

    @torch._dynamo.nonstrict_trace
    def local_trace(a):
        return a.sin()

    print(torch.compile(lambda a: local_trace(a) + 1, fullgraph=True,
                        backend="eager")(torch.randn(2)).shape)

    @leaf_function
    def local_leaf(a):
        return (a.cos(),)

    @local_leaf.register_fake
    def local_leaf_fake(a):
        return (torch.empty_like(a),)

    # (a setting of leaf functions, which the replay sets too)
    with torch._dynamo.config.patch(leaf_function_validate_outputs=True):
        print(torch.compile(lambda a: local_leaf(a)[0] * 2, fullgraph=True,
                            backend="aot_eager")(torch.randn(2)).shape)


main()
