"""GPT-2 training, the model compiled as a module, the optimizer step and
transformers' linear warmup schedule compiled in one function: the
AdamW object and its state tensors are one object across the step's
compiles, which recompile as the schedule changes the learning rate."""
import torch
from transformers import GPT2Config, GPT2LMHeadModel, get_linear_schedule_with_warmup
torch.manual_seed(0)
cfg = GPT2Config(vocab_size=128, n_embd=32, n_layer=2, n_head=2, n_positions=64)
model = GPT2LMHeadModel(cfg)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
sched = get_linear_schedule_with_warmup(opt, num_warmup_steps=2, num_training_steps=6)
cmodel = torch.compile(model, backend="aot_eager")

@torch.compile(backend="eager")
def opt_step():
    opt.step()
    sched.step()

model.train()
for i in range(4):
    x = torch.randint(0, 128, (2, 8))
    out = cmodel(input_ids=x, labels=x)
    out.loss.backward()
    opt_step()
    opt.zero_grad(set_to_none=True)
    print(i, round(float(out.loss), 4))
