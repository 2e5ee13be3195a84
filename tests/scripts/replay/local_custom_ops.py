import typing

import torch
import torch._dynamo.testing


class Tests:
    def test_compliant(self):
        with torch.library._scoped_library("mylib", "FRAGMENT") as lib:
            torch.library.define("mylib::bar", "(Tensor x) -> Tensor", lib=lib,
                                 tags=(torch.Tag.pt2_compliant_tag,))
            torch.library.impl("mylib::bar", "CompositeImplicitAutograd", torch.sin, lib=lib)

            def f(x):
                return torch.ops.mylib.bar(x)

            overload = torch.ops.mylib.bar.default

            def g(x):
                return overload(x) + 1

            counts = torch._dynamo.testing.CompileCounter()
            torch.compile(f, backend=counts, fullgraph=True)(torch.randn(3))
            torch.compile(g, backend=counts, fullgraph=True)(torch.randn(3))

    def test_out_variant(self):
        with torch.library._scoped_library("mylib", "FRAGMENT") as lib:
            lib.define("copy_to(Tensor src, *, Tensor(a!)[] out) -> ()")

            @torch.library.impl(lib, "copy_to", "Meta")
            @torch.library.impl(lib, "copy_to", "CPU")
            def copy_to(src: torch.Tensor, out: typing.List[torch.Tensor]) -> None:
                for o in out:
                    o.copy_(src)

            @torch.compile(backend="eager", fullgraph=True)
            def f1(src, out):
                return torch.ops.mylib.copy_to(src, out=out)

            f1(torch.randn(3), [torch.empty(3), torch.empty(3)])

        # A second library bound to the same name (the replay keeps the
        # first one's op for f1, which it compiles first).
        with torch.library._scoped_library("mylib", "FRAGMENT") as lib:
            lib.define("twice(Tensor x) -> Tensor")
            lib.impl("twice", lambda x: x * 2, "CompositeImplicitAutograd")

            @torch.compile(backend="eager", fullgraph=True)
            def f2(src):
                return torch.ops.mylib.twice(src)

            f2(torch.randn(3))

    def test_fake_and_kernel(self):
        # The same op name as another test's, defined again here.
        with torch.library._scoped_library("mylib", "FRAGMENT") as lib:
            torch.library.define("mylib::bar", "(Tensor a, Tensor b) -> Tensor", lib=lib)

            @torch.library.impl("mylib::bar", "cpu", lib=lib)
            @torch.library.register_fake("mylib::bar", lib=lib)
            def bar_impl(x, y):
                return torch.cat([x, y])

            @torch.compile(backend="aot_eager", fullgraph=True)
            def f(x, i):
                return torch.ops.mylib.bar(x, i)

            f(torch.randn(4, requires_grad=True), torch.randn(2))

    def test_lambda_kernels(self):
        with torch.library._scoped_library("mylib", "FRAGMENT") as lib:
            lib.define("pair(Tensor x) -> (Tensor, Tensor)")
            lib.impl("pair", lambda x: (x * 2, x + 1), "CompositeExplicitAutograd")
            lib.impl("pair", lambda x: (torch.empty_like(x), torch.empty_like(x)), "Meta")

            def fn(x):
                a, b = torch.ops.mylib.pair(x)
                return a + b

            torch.compile(fn, fullgraph=True, backend="eager")(torch.randn(4))


t = Tests()
t.test_compliant()
t.test_out_variant()
t.test_fake_and_kernel()
t.test_lambda_kernels()
print("done")
