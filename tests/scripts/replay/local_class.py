"""Classes defined inside functions, as PyTorch's own tests define them: an
nn.Module whose forward is compiled (train/eval recompile), and a plain
state object passed to a compiled function, both from a test method."""
import torch


class Case:
    def test_module(self):
        scale = 2.0

        class Block(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(4, 4)
                self.drop = torch.nn.Dropout(0.5)

            def forward(self, x):
                return self.drop(self.lin(x)) * scale

        m = torch.compile(Block(), backend="eager")
        x = torch.ones(2, 4)
        m.eval()
        m(x)
        m.train()
        m(x)

    def test_state(self):
        class State:
            def __init__(self, k):
                self.k = k

        def f(x, st):
            return x * st.k

        cf = torch.compile(f, backend="eager")
        cf(torch.ones(3), State(2))
        cf(torch.ones(3), State(3))


Case().test_module()
Case().test_state()
print("done")
