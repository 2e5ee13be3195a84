"""BERT (a tiny config, random weights) in eval mode with an attention mask."""
import torch
from transformers import BertConfig, BertModel

torch.manual_seed(0)
cfg = BertConfig(num_hidden_layers=2, num_attention_heads=2, hidden_size=32,
                 intermediate_size=64, vocab_size=100)
model = BertModel(cfg).eval()
cm = torch.compile(model, backend="eager")
with torch.no_grad():
    ids = torch.randint(0, 100, (2, 8))
    mask = torch.ones(2, 8, dtype=torch.long)
    mask[1, 6:] = 0
    print(tuple(cm(input_ids=ids, attention_mask=mask).last_hidden_state.shape))
