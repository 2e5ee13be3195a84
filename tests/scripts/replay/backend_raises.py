import torch
import torch._dynamo


def test_one():
    def my_compiler(gm, example_inputs):
        raise RuntimeError("duck!")

    @torch.compile(backend=my_compiler)
    def fn(a, b):
        return a + b

    try:
        fn(torch.randn(3), torch.randn(3))
    except Exception as e:
        print("raised", type(e).__name__)


def test_two():
    def broken_backend(gm, example_inputs):
        if len(example_inputs) > 1:
            raise ValueError("two inputs")
        return gm.forward

    torch._dynamo.config.suppress_errors = True

    @torch.compile(backend=broken_backend)
    def fn(x):
        return x.sin() * 2

    @torch.compile(backend=broken_backend)
    def gn(x, y):
        return x.cos() + y

    print(fn(torch.ones(2)).shape, gn(torch.ones(2), torch.ones(2)).shape)
    torch._dynamo.config.suppress_errors = False


test_one()
test_two()
