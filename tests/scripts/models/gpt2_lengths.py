"""GPT-2 (transformers, a tiny config with random weights) compiled as a
module, over three sequence lengths: the second length recompiles, the
third reuses the dynamic graph.  transformers' output-capturing registry is
filled while the program runs; the replay must put it back."""
import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
cfg = GPT2Config(n_layer=2, n_head=2, n_embd=32, vocab_size=100, n_positions=64,
                 bos_token_id=1, eos_token_id=2)
model = GPT2LMHeadModel(cfg).eval()
cm = torch.compile(model, backend="eager")
with torch.no_grad():
    for n in (5, 7, 9):
        out = cm(input_ids=torch.randint(0, 100, (1, n)))
        print(n, tuple(out.logits.shape))
