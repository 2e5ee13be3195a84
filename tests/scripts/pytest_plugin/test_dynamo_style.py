"""Written as PyTorch's own Dynamo tests are, with what they pass to compiled
functions: an assert inside one (pytest rewrites it, and the rewritten
locals name the graph's nodes), a dataclass defined inside the test, a
tensor with an attribute of its own."""
import dataclasses

import torch
import torch._dynamo.test_case


class Style(torch._dynamo.test_case.TestCase):
    def test_assert_local_dataclass_tensor_attribute(self):
        @dataclasses.dataclass
        class Pair:
            a: torch.Tensor
            b: torch.Tensor = None

        def fn(p, x):
            assert torch.ones(()).dim() == 0  # pytest stores torch.ones(()) in @py_assert1
            out = p.a * x.scale
            if p.b is not None:
                out = out + p.b
            return out + torch.ones(())

        x = torch.randn(3)
        x.scale = 2
        f = torch.compile(fn, backend="eager")
        self.assertEqual(f(Pair(torch.ones(3)), x).shape, (3,))
        f(Pair(torch.ones(3), torch.ones(3)), x)
