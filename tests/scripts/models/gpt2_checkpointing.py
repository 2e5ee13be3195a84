import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
cfg = GPT2Config(vocab_size=128, n_embd=32, n_layer=2, n_head=4, n_positions=64)
model = GPT2LMHeadModel(cfg)
model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
model.train()
cmodel = torch.compile(model, backend="aot_eager")
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(2):
    ids = torch.randint(0, 128, (2, 8))
    loss = cmodel(input_ids=ids, labels=ids).loss
    loss.backward()
    opt.step()
    opt.zero_grad()
    print(step, round(loss.item(), 4))
