"""Builtin iterators and exceptions as values: a filter over a lambda
whose data-dependent test makes Dynamo skip the frame (PyTorch's
test_functions, test_filter_fallback), builtin iterators part way through
as arguments, and exceptions (a StopIteration, a subclass defined inside a
function, as in test_ctx_manager's test_contextmanager_traceback3; a
ValueError with an attribute) as arguments."""
import torch


def fn(inputs):
    out = inputs[0]
    for inp in filter(lambda x: x[0] == 1, inputs):
        out = out * inp
    return out


def walk(x, it):
    for i, a in it:
        x = x + a * i
    return x


def total(x, it):
    for a in it:
        x = x + a
    return x


# One compiled function per iterator: Dynamo skips a frame whose argument
# it cannot iterate, so a code object sees one iterator only.
walk_enumerate = torch.compile(backend="eager")(lambda x, it: walk(x, it))
walk_zip = torch.compile(backend="eager")(lambda x, it: walk(x, it))
total_iter = torch.compile(backend="eager")(lambda x, it: total(x, it))
total_map = torch.compile(backend="eager")(lambda x, it: total(x, it))
total_filter = torch.compile(backend="eager")(lambda x, it: total(x, it))


def main():
    inputs = [torch.ones(2, dtype=torch.bfloat16), torch.arange(2, dtype=torch.bfloat16)]
    print(torch.compile(backend="eager")(fn)(inputs))

    ys = [torch.ones(2), torch.ones(2) * 2, torch.ones(2) * 3]
    print(walk_enumerate(torch.zeros(2), enumerate(ys, 1)))
    print(walk_zip(torch.zeros(2), zip([1, 2], ys)))
    it = iter(ys)
    next(it)
    print(total_iter(torch.zeros(2), it))
    print(total_map(torch.zeros(2), map(lambda t: t * 2, ys)))
    print(total_filter(torch.zeros(2), filter(lambda t: t.dim() == 1, ys)))

    class StopIterationSubclass(StopIteration):
        pass

    @torch.compile(backend="eager")
    def stops(t, e):
        if isinstance(e, StopIterationSubclass):
            t = t - 1
        return t + len(e.args) + (1 if e.value == "spam" else 0)

    for stop_exc in (StopIteration("spam"), StopIterationSubclass("spam")):
        print(stops(torch.ones(2), stop_exc))

    err = ValueError("bad", 3)
    err.code = 7

    @torch.compile(backend="eager")
    def reads(t, e):
        return t * e.args[1] + e.code

    print(reads(torch.ones(2), err))


main()
