"""replay scenario: an nn.Module with submodules, switched between train and
eval; an int argument and a module-level global that change between calls;
grad mode toggled.  Every change is a recompile with its own guard failure."""

import torch
import torch._dynamo

torch._dynamo.config.automatic_dynamic_shapes = False
SCALE = 2.0


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.drop = torch.nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(torch.relu(self.lin(x)))


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Block()
        self.b = Block()
        self.register_buffer("offset", torch.ones(4))

    def forward(self, x, k):
        return (self.b(self.a(x)) + self.offset) * k * SCALE


def main():
    global SCALE
    torch.manual_seed(0)
    net = Net()
    fn = torch.compile(net, backend="eager")
    x = torch.ones(2, 4)
    net.eval()
    fn(x, 1)
    net.train()
    fn(x, 1)
    net.eval()
    fn(x, 3)
    SCALE = 3.0
    fn(x, 3)
    with torch.no_grad():
        out = fn(x, 3)
    print(out.shape)


if __name__ == "__main__":
    main()
