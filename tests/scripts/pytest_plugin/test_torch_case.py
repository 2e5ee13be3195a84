"""Written as PyTorch's own Dynamo tests are: torch._dynamo.test_case.TestCase
(its setUp resets Dynamo), CompileCounter, a config patch."""
from unittest.mock import patch

import torch
import torch._dynamo.test_case
import torch._dynamo.testing


class Recompiles(torch._dynamo.test_case.TestCase):
    def test_first(self):
        cnt = torch._dynamo.testing.CompileCounter()
        f = torch.compile(lambda x: x + 1, backend=cnt)
        f(torch.ones(2))
        self.assertEqual(cnt.frame_count, 1)

    @patch.object(torch._dynamo.config, "automatic_dynamic_shapes", False)
    def test_second_recompiles(self):
        def foo(x, y):
            return x * y

        cnt = torch._dynamo.testing.CompileCounter()
        opt = torch._dynamo.optimize(cnt)(foo)
        opt(torch.randn(2), torch.randn(2))
        opt(torch.randn(3), torch.randn(3))
        self.assertEqual(cnt.frame_count, 2)
