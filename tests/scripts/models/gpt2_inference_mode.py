import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
cfg = GPT2Config(n_layer=2, n_head=2, n_embd=32, vocab_size=128, n_positions=64)
model = GPT2LMHeadModel(cfg).eval()
cmodel = torch.compile(model, backend="eager",
                       options={"guard_filter_fn": torch.compiler.skip_guard_on_all_nn_modules_unsafe})
with torch.inference_mode():
    for n in (8, 12, 16):
        ids = torch.randint(0, 128, (1, n))
        out = cmodel(input_ids=ids)
        print(n, tuple(out.logits.shape))
