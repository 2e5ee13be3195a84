import torch
from transformers import GPT2Config, GPT2Model

torch.manual_seed(0)
cfg = GPT2Config(vocab_size=128, n_embd=32, n_layer=2, n_head=4, n_positions=64)
model = GPT2Model(cfg).eval()
cmodel = torch.compile(model, backend="eager")
with torch.no_grad():
    ids = torch.randint(0, 128, (1, 6))
    out = cmodel(input_ids=ids, output_hidden_states=True, output_attentions=True)
    print(len(out.hidden_states), len(out.attentions))
    out = cmodel(input_ids=ids, return_dict=False)
    print(len(out))
