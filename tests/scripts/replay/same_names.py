"""Two test methods each compile a local function named fn with a graph
break: `--frame T.test_a.<locals>.fn` means that one and its resume
function, never test_b's."""
import torch


class T:
    def test_a(self):
        def fn(x):
            y = x.sin()
            torch._dynamo.graph_break()
            return y + 1

        torch.compile(fn, backend="eager")(torch.ones(3))

    def test_b(self):
        def fn(x):
            y = x.cos()
            torch._dynamo.graph_break()
            return y - 1

        torch.compile(fn, backend="eager")(torch.ones(3))


T().test_a()
T().test_b()
print("done")
