import dataclasses
import torch


def test_bases_and_attrs():
    def my_add(*args):
        obj, a, b = args
        return obj.x + a + b

    class FlagDescriptor:
        def __get__(self, instance, owner):
            if hasattr(owner, "flag"):
                return 1
            return 0

    class A:
        a = 4

        def mul(self, x):
            return x * 0.1

    class B(A):
        coeff = 4
        add = my_add
        prop = FlagDescriptor()
        flag = True

        def __init__(self, x):
            self.x = x

        def mul(self, x):
            return super().mul(x) * x * 0.2

    class C(B):
        def run(self, x):
            d = B.mul(self, x)
            e = super(B, self).mul(x)
            return d + e + self.add(x, 2) + self.prop

    obj = C(0.5)

    @torch.compile(backend="eager")
    def fn(x, obj, A):
        return obj.run(x) + (1 if A is type(obj).__mro__[2] else 0)

    print(fn(torch.ones(3), obj, A))
    C.later = staticmethod(my_add)


def test_inference_and_state():
    with torch.inference_mode():
        x = torch.ones(4)

    @torch.compile(backend="eager")
    def g(x):
        return x * 2

    print(g(x))
    torch._C._set_cublas_allow_tf32(True)
    print(g(torch.ones(4)))
    torch._C._set_cublas_allow_tf32(False)


# (a pattern with escapes, as Dynamo's own tests write them)
@torch.compiler.config.patch(dynamic_sources="L\\['y.*'\\]")
def test_dynamic_sources():
    @torch.compile(dynamic=False, backend="eager")
    def h(x, y):
        return x * y

    h(2, torch.randn(2))
    h(3, torch.randn(3))


test_bases_and_attrs()
test_inference_and_state()
test_dynamic_sources()


def test_inside_dispatch_mode_and_inference_mode():
    from torch.utils._python_dispatch import TorchDispatchMode

    class Yolo(TorchDispatchMode):
        @classmethod
        def _should_skip_dynamo(cls):
            return False

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return torch.ops.aten.mul.Tensor(args[0], args[1])

    x = torch.ones(5)
    with Yolo():
        torch.compile(torch.add, backend="eager", fullgraph=True)(x, x)

    @torch.compile(fullgraph=True, backend="eager")
    def f(x):
        return x.data

    with torch.inference_mode():
        f(torch.randn(3))


test_inside_dispatch_mode_and_inference_mode()


def test_disabled_class():
    @torch._dynamo.disable
    class Inner(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layer0 = torch.nn.Linear(4, 4)

        def forward(self, inp):
            return self.layer0(torch.sigmoid(inp))

    class Outer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layer0 = Inner()
            self.layer1 = torch.nn.Linear(4, 4)

        def forward(self, inp):
            z = self.layer0(torch.sin(inp))
            return self.layer1(z)

    torch.compile(Outer(), backend="eager")(torch.randn(4))


test_disabled_class()


def test_class_attribute_changed_between_calls():
    class A:
        a = 4

    class B(A):
        def add(self, x):
            return super().a * x

    fn = B().add
    opt = torch.compile(fn, backend="eager", fullgraph=True)
    opt(torch.ones(2))
    A.a = 5
    opt(torch.ones(2))


test_class_attribute_changed_between_calls()
