"""hostile_strings.py -- a program whose trace carries text that would break
Markdown or HTML if a report copied it as it is: a graph-break message and
an exception message with <script>, backticks and a line that starts
with a run of backticks alone on a line, and a string argument (guarded, so its recompile reason shows
it).  Used by the tests of `dynrec report`."""

import logging

import torch
import torch._dynamo

torch._dynamo.config.suppress_errors = True
logging.getLogger("torch._dynamo").setLevel(logging.CRITICAL)

# The second line is a fence of four backticks: a report whose code block
# used a shorter fence would end the block there.
EVIL = "<script>alert('pwn')</script> ``` `tick`\n````\n<b>bold</b> & *star*"


@torch.compile(backend="eager")
def step(x, mode):
    x = x + 1
    torch._dynamo.graph_break(msg=EVIL)
    return x * 2 if mode == "a" else x


def evil_backend(gm, example_inputs):
    raise RuntimeError("backend says " + EVIL)


@torch.compile(backend=evil_backend)
def g(x):
    return torch.relu(x) * 3


for mode in ("a", "<i>`b`</i>"):
    step(torch.ones(3), mode)
print(float(g(torch.ones(2)).sum()))
