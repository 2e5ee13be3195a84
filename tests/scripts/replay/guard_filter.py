import torch


def test_filter_by_id():
    def keep_no_id(entries):
        return [entry.guard_type != "ID_MATCH" for entry in entries]

    @torch.compile(fullgraph=True, options={"guard_filter_fn": keep_no_id}, backend="eager")
    def fn(x):
        return id(x)

    fn(torch.randn(3, 2))
    fn(torch.randn(3, 2))


def test_library_filter():
    @torch.compile(backend="eager",
                   options={"guard_filter_fn": torch.compiler.skip_guard_on_globals_unsafe})
    def g(x):
        return x * SCALE

    g(torch.ones(2))


SCALE = 2.0
test_filter_by_id()
test_library_filter()
