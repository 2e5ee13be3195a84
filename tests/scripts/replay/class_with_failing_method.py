import torch


def make_marker():
    def mark(fn):
        return fn

    return mark


# A call: not among the definitions the replay runs, so `marker` does not
# exist there and the decorator below fails.
marker = make_marker()


class Tests:
    """Tests of one class, one of whose methods the replay cannot make."""

    scale = 2

    @marker
    def helper(self):
        return 0

    def test_add(self):
        @torch.compile(backend="eager")
        def fn(x):
            return x * self.scale + 1

        return fn(torch.ones(2)), fn(torch.ones(3))


print(Tests().test_add())
