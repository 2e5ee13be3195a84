"""replay scenario: classes defined inside a function whose methods call
functions defined beside them (closure cells of the methods), as a test
method defines a helper and a module that uses it."""

import torch


def make(scale):
    def helper(x):
        return x * scale

    offset = torch.tensor([1.0, 2.0, 3.0])

    class Block(torch.nn.Module):
        def forward(self, x):
            return helper(x) + offset

        @staticmethod
        def twice(x):
            return helper(helper(x))

    return Block()


def run(m, x):
    return m(x) - m.twice(x)


compiled = torch.compile(run, backend="eager")
print(compiled(make(2.0), torch.ones(3)).tolist())
print(compiled(make(3.0), torch.ones(3)).tolist())
print(torch.compile(make(4.0), backend="eager")(torch.ones(3)).tolist())
print(torch.compile(make(5.0), backend="eager")(torch.ones(3)).tolist())
