"""transformer_train.py -- the trace-size benchmark's training workload.

A small transformer encoder trained with torch.compile(backend="aot_eager")
for STEPS steps (forward, backward, optimizer step), with a change of batch
size midway (a recompile).  Prints the final loss."""

import sys

import torch
import torch.nn as nn

STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 60
torch.manual_seed(0)


class Model(nn.Module):
    def __init__(self, vocab=100, dim=32, heads=4, layers=2):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        layer = nn.TransformerEncoderLayer(dim, heads, dim_feedforward=64, dropout=0.0,
                                           batch_first=True)
        self.enc = nn.TransformerEncoder(layer, layers)
        self.out = nn.Linear(dim, vocab)

    def forward(self, tokens):
        return self.out(self.enc(self.emb(tokens)))


model = Model()
opt = torch.optim.SGD(model.parameters(), lr=0.05)
step = torch.compile(model, backend="aot_eager")
loss_fn = nn.CrossEntropyLoss()
for i in range(STEPS):
    batch = 8 if i < STEPS // 2 else 6
    tokens = torch.randint(0, 100, (batch, 12))
    logits = step(tokens)
    loss = loss_fn(logits.reshape(-1, 100), tokens.reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
print("loss %.3f" % loss.item())
