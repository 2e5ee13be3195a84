"""A head over a transformers ModelOutput (a dataclass that is also an
OrderedDict): compiled on an output with one field, then on one with two
(a recompile)."""
import torch
from transformers.modeling_outputs import BaseModelOutput


def head(out):
    x = out.last_hidden_state * 2
    if out.hidden_states is not None:
        x = x + out.hidden_states[0]
    return x.sum(-1) + len(out)


f = torch.compile(head, backend="eager")
print(f(BaseModelOutput(last_hidden_state=torch.ones(2, 4))).tolist())
print(f(BaseModelOutput(last_hidden_state=torch.ones(2, 4),
                        hidden_states=(torch.ones(2, 4),))).tolist())
