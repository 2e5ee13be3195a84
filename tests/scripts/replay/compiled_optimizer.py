# torch.compile of an optimizer's step (the pattern of PyTorch's "compiling
# the optimizer" recipe) beside a compiled module, with a learning-rate
# scheduler: Dynamo's tracing of the first step makes the optimizer's state
# (its step tensors), guards the optimizer and those tensors by identity,
# and recompiles when the scheduler changes the learning rate.
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)


@torch.compile(backend="eager")
def step():
    opt.step()


cmodel = torch.compile(model, backend="aot_eager")
for i in range(5):
    x = torch.randn(4, 8)
    loss = cmodel(x).pow(2).mean()
    loss.backward()
    step()
    opt.zero_grad()
    sched.step()
print(round(loss.item(), 4))
