"""replay scenario: modules with parametrized weights (weight_norm, as
Wav2Vec2's positional convolution; an orthogonal Linear), whose classes
torch.nn.utils.parametrize makes per module (ParametrizedConv1d)."""

import torch


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.utils.parametrizations.weight_norm(
            torch.nn.Conv1d(4, 4, 3, padding=1), name="weight", dim=2)
        self.other = torch.nn.utils.parametrizations.weight_norm(torch.nn.Conv1d(4, 4, 1))

    def forward(self, x):
        return self.conv(x).relu() + self.other(x)


m = Block()
compiled = torch.compile(m, backend="eager")
print(compiled(torch.randn(2, 4, 8)).shape)
print(compiled(torch.randn(2, 4, 16)).shape)
print(type(m.conv).__name__, type(m.conv) is type(m.other))
