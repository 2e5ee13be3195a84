"""view_global.py -- a recompile on a global the frame reads, then one on
a module's training flag that Dynamo guards inside torch's dropout
(tests/test_view.c).  After the first change Dynamo no longer pins the
float's value in a guard (a type check instead): the viewer's value
history takes it from the captured inputs."""
import torch

SCALE = 2.0


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = torch.nn.Dropout(p=0.0)

    def forward(self, x):
        return self.drop(x * 2)


net = Net()


@torch.compile(backend="eager")
def f(x):
    return net(x) * SCALE  # SCALE_GUARD


f(torch.ones(3))
SCALE = 3.0
f(torch.ones(3))
SCALE = 4.0
f(torch.ones(3))
net.eval()
f(torch.ones(3))
