"""inductor_model.py -- a small nn.Module compiled with the inductor backend.

One shape, so one compile (inductor generates and builds C++ on the CPU,
which takes seconds).  What its trace should show: one compile of the
module's forward in v_compiles, a v_graphs row whose backend names inductor
and that has a few nodes, no errors, and cache hits for the 2 later calls.
"""

import torch
from torch import nn


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return torch.softmax(self.fc2(torch.relu(self.fc1(x))), dim=-1)


def main():
    torch.manual_seed(0)
    model = Mlp().eval()
    compiled = torch.compile(model, backend="inductor")
    x = torch.randn(2, 8)
    with torch.no_grad():
        for _ in range(3):
            y = compiled(x)
    print([round(v, 4) for v in y.sum(dim=0).tolist()])


if __name__ == "__main__":
    main()
