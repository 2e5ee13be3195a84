"""A test file in the style of PyTorch's own: torch._dynamo.test_case.TestCase
calls torch._dynamo.reset() in setUp and tearDown, so every test's compile
ids start again at 0/0."""
import torch
import torch._dynamo.test_case
from torch._dynamo.testing import CompileCounter


def scale(x, n):
    return x * n


def shift(x, y):
    return x + y.sum()


class ResetCase(torch._dynamo.test_case.TestCase):
    def test_a_recompiles(self):
        cnt = CompileCounter()
        f = torch.compile(scale, backend=cnt)
        for n in (2, 3, 4):
            f(torch.ones(3), n)
        self.assertEqual(cnt.frame_count, 2)  # automatic dynamic from the third call

    def test_b_two_frames(self):
        f = torch.compile(shift, backend="eager")
        g = torch.compile(scale, backend="eager")
        f(torch.ones(2), torch.ones(2))
        g(torch.ones(2), 5)
        g(torch.ones(2), 6)

    def test_c_shapes(self):
        f = torch.compile(shift, backend="eager", dynamic=False)
        for n in (2, 3):
            f(torch.ones(n), torch.ones(n))


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
