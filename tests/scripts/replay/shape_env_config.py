"""The ShapeEnv's own config (torch.fx.experimental._config) changes what
Dynamo decides: with symbol_guard_limit_before_specialize=3, a size that
collects four guards is specialized, so three sizes compile three times
where the default compiles once (PyTorch's test_unspec
test_symbol_guard_limit_before_specialize does the same)."""
import torch


def fn(x):
    torch._check(x.size(0) != 3)
    torch._check(x.size(0) != 4)
    torch._check(x.size(0) != 5)
    torch._check(x.size(0) != 6)
    return x + 2


if __name__ == "__main__":
    cfn = torch.compile(fn, backend="eager", dynamic=True)
    for n in (12, 13, 14):
        cfn(torch.randn(n))
    torch._dynamo.reset()
    with torch.fx.experimental._config.patch(symbol_guard_limit_before_specialize=3):
        for n in (12, 13, 14):
            cfn(torch.randn(n))
    print("done")
