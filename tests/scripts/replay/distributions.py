# Probability distributions handed to compiled functions (an RL policy's
# Normal and Categorical): plain objects of torch's classes, their
# parameters, shapes and the lazy properties already computed.  And an
# OpInfo's SampleInput, a plain object of torch's test helpers (slots).
import torch
import torch.distributions as D
from torch.testing._internal.opinfo.core import SampleInput


@torch.compile(backend="eager")
def logp(d, x):
    return d.log_prob(x).sum()


@torch.compile(backend="eager")
def sample_ent(d):
    return d.entropy().mean()


n = D.Normal(torch.zeros(3), torch.ones(3))
print(logp(n, torch.randn(3)))
c = D.Categorical(logits=torch.randn(4, 5))
print(sample_ent(c))


@torch.compile(backend="eager", fullgraph=True)
def sample_sum(sample):
    return sample.input + sample.args[0] + sample.kwargs["a"]


print(sample_sum(SampleInput(torch.ones(2), args=(1,), kwargs={"a": 2})))
