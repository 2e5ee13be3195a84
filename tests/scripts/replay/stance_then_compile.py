# torch.compiler.set_stance("eager_then_compile"): the first call runs eager
# and the compile at the second call makes dynamic what changed between
# the two calls (sizes and ints).  "aot_eager_then_compile": the first call
# compiles with aot_eager.  A graph break makes a resume function that is
# delayed the same way.
import torch
import torch._dynamo.testing

cnts = torch._dynamo.testing.CompileCounter()


@torch.compile(backend=cnts)
def fn(x, y, z):
    return x * y * z[0]


@torch.compile(backend="eager")
def broken(x, y):
    y = torch.sin(y)
    torch._dynamo.graph_break()
    return torch.cos(y) * x


with torch.compiler.set_stance("eager_then_compile"):
    for n in (1, 2, 3):
        fn(n, torch.randn(n), {0: torch.randn(n)})
        broken(n, torch.randn(n))
with torch.compiler.set_stance("aot_eager_then_compile"):
    h = torch.compile(lambda a: a.relu() + 1, backend="eager")
    for n in (4, 5, 6):
        h(torch.randn(n))
print(cnts.frame_count)
