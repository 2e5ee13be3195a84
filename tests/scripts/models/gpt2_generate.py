"""GPT-2 generate with a compiled forward, the pattern transformers documents:
model.forward = torch.compile(model.forward)."""
import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
cfg = GPT2Config(n_layer=2, n_head=2, n_embd=32, vocab_size=100, n_positions=64,
                 bos_token_id=1, eos_token_id=2, pad_token_id=2)
model = GPT2LMHeadModel(cfg).eval()
model.forward = torch.compile(model.forward, backend="eager")
with torch.no_grad():
    out = model.generate(torch.randint(3, 100, (1, 4)), max_new_tokens=4, do_sample=False)
print(tuple(out.shape))
