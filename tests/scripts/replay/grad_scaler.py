# A mixed-precision training step compiled whole (autocast, the gradient
# scaler's scale, unscale_, step and update, gradient clipping, AdamW), as
# PyTorch's AMP recipe writes it: the GradScaler is a plain object of
# torch's class (its scale and growth tracker tensors, its per-optimizer
# states), one object across the compiles.
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
opt = torch.optim.AdamW(model.parameters(), lr=0.01)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0**8)


@torch.compile(backend="eager")
def train_step(x, y):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = torch.nn.functional.mse_loss(model(x).float(), y)
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(opt)
    scaler.update()
    opt.zero_grad(set_to_none=True)
    return loss.detach()


for i in range(2):
    loss = train_step(torch.randn(4, 8), torch.randn(4, 1))
print(loss.shape, scaler.get_scale())
