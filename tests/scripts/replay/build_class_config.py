"""replay scenario: Dynamo settings a test sets: enable_trace_load_build_class
(a class statement inside a compiled function is traced, not a graph break)
and log_compilation_metrics (only logs: never set, and no note)."""

import torch


def fn(x):
    class Scale:
        k = 3

    return x * Scale.k


torch._dynamo.config.log_compilation_metrics = False
with torch._dynamo.config.patch(enable_trace_load_build_class=True):
    print(torch.compile(fn, backend="eager")(torch.ones(2)).tolist())
torch._dynamo.reset()
print(torch.compile(fn, backend="eager")(torch.ones(2)).tolist())
