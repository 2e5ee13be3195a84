"""A user module around a tiny BERT: a print of `.item()` and a
data-dependent `if` break the graph; two sequence lengths recompile."""
import torch
from transformers import BertConfig, BertModel

torch.manual_seed(0)


class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        cfg = BertConfig(num_hidden_layers=1, num_attention_heads=2, hidden_size=32,
                         intermediate_size=64, vocab_size=100)
        self.bert = BertModel(cfg).eval()
        self.fc = torch.nn.Linear(32, 2)

    def forward(self, ids):
        h = self.bert(input_ids=ids).last_hidden_state
        print("mean", round(h.mean().item(), 3))
        y = self.fc(h[:, 0])
        if y.sum() > 0:
            return y * 2
        return y - 1


cm = torch.compile(Head(), backend="eager")
with torch.no_grad():
    for n in (6, 8):
        print(tuple(cm(torch.randint(0, 100, (2, n))).shape))
