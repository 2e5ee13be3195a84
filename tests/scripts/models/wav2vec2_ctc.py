"""Wav2Vec2 CTC training step (tiny config, random weights),
torch.compile(model) with aot_eager: its positional convolution is
weight-normed (a ParametrizedConv1d), its feature encoder sets
requires_grad on a view, transformers' output capturing iterates a dict
across a graph break, and a ModelOutput's __init__ is reached behind the
functools.wraps wrapper its metaclass installs."""

import torch
from transformers import Wav2Vec2Config, Wav2Vec2ForCTC

torch.manual_seed(0)
cfg = Wav2Vec2Config(vocab_size=20, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, conv_dim=(16, 16), conv_stride=(5, 2),
                     conv_kernel=(10, 3), num_conv_pos_embeddings=8,
                     num_conv_pos_embedding_groups=2, do_stable_layer_norm=True,
                     feat_extract_norm="layer", mask_time_prob=0.0, pad_token_id=0,
                     ctc_loss_reduction="mean")
model = Wav2Vec2ForCTC(cfg).train()
cm = torch.compile(model, backend="aot_eager")
x = torch.randn(2, 800)
labels = torch.randint(1, 20, (2, 5))
out = cm(input_values=x, labels=labels)
out.loss.backward()
print(out.logits.shape, round(out.loss.item(), 3))
