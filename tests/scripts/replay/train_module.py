"""torch.compile(model) on an nn.Module, trained (forward, backward, SGD
step) under aot_eager; the batch size changes midway, which recompiles the
module's frame.  Replayed without --trust, the recompile is one on the
same code, with the recorded guard failure."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class Model(nn.Module):
    def __init__(self, vocab=50, dim=16, heads=2, layers=2):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        layer = nn.TransformerEncoderLayer(dim, heads, dim_feedforward=32, dropout=0.0,
                                           batch_first=True)
        self.enc = nn.TransformerEncoder(layer, layers)
        self.out = nn.Linear(dim, vocab)

    def forward(self, tokens):
        return self.out(self.enc(self.emb(tokens)))


model = Model()
opt = torch.optim.SGD(model.parameters(), lr=0.05)
cmodel = torch.compile(model, backend="aot_eager")
for step in range(6):
    batch = 4 if step < 3 else 3
    tokens = torch.randint(0, 50, (batch, 8))
    loss = nn.functional.cross_entropy(cmodel(tokens).reshape(-1, 50), tokens.reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
print("loss %.3f" % loss.item())
