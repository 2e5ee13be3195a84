"""DeBERTa-v2 (tiny config, random weights) called by a compiled function
that reaches the model through a global: the guards read
transformers.activations' ACT2FN through the model's module, a registry
whose __getitem__ makes a new activation module per lookup."""

import torch
from transformers import DebertaV2Config, DebertaV2ForSequenceClassification

torch.manual_seed(0)
cfg = DebertaV2Config(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                      intermediate_size=64, max_position_embeddings=64, num_labels=3,
                      relative_attention=True, position_buckets=16, pos_att_type=["p2c", "c2p"])
model = DebertaV2ForSequenceClassification(cfg).eval()


@torch.compile(backend="eager")
def classify(ids):
    return model(input_ids=ids).logits.softmax(-1)


with torch.no_grad():
    for n in (7, 10):
        print(n, classify(torch.randint(3, 100, (2, n))).shape)
