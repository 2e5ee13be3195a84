"""replay scenario: torch.compiler.set_stance("default", force_backend=B)
around calls of compiled functions: Dynamo compiles them with B itself,
not through torch.compile's wrapper, and a second forced backend is a
BACKEND_MATCH recompile naming both (a backend object, a registered name,
a function of the program's; the frame reached through a disabled
function compiles no graph)."""
import torch
import torch._dynamo.testing


@torch.compile
def a(x):
    return x + 1


counter = torch._dynamo.testing.CompileCounter()


@torch.compiler.set_stance("default", force_backend=counter)
def b(x):
    return a(x)


print(b(torch.ones(3)), counter.frame_count)


@torch.compiler.set_stance("default", force_backend="eager")
def c(x):
    return a(x)


print(c(torch.ones(3)))


@torch.compiler.disable
def inner(x):
    return x


@torch.compile(backend="eager")
def f(x):
    return inner(x)


print(f(torch.ones(3, 3)).shape)


def fail_backend(gm, example_inputs):
    raise RuntimeError("fail!")


with torch.compiler.set_stance("default", force_backend=fail_backend):
    print(f(torch.ones(3, 3)).shape)
