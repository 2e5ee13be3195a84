"""A Llama training step (a tiny config, random weights): forward with
labels, backward and AdamW, under aot_eager, twice."""
import torch
from transformers import LlamaConfig, LlamaForCausalLM

torch.manual_seed(0)
cfg = LlamaConfig(num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1,
                  hidden_size=32, intermediate_size=64, vocab_size=100,
                  max_position_embeddings=64)
model = LlamaForCausalLM(cfg)
cm = torch.compile(model, backend="aot_eager")
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(2):
    ids = torch.randint(0, 100, (2, 8))
    out = cm(input_ids=ids, labels=ids)
    out.loss.backward()
    opt.step()
    opt.zero_grad()
    print(step, out.loss.item() > 0)
