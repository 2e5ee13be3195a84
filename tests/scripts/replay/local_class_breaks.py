"""A graph break inside a method of a class defined in a test method,
called from its forward, with nested graph breaks (as Dynamo's own tests
run): the method's resume function is handed to forward's.  The replay finds
it by its bytecode, so the class's methods must compile as in the file (a
method of an imported module, torch.mm, is a LOAD_ATTR there)."""
import torch


class T:
    def test_m(self):
        class MyModule(torch.nn.Module):
            def __init__(self, bias):
                super().__init__()
                self.bias = bias

            def mm_breaks(self, x, y):
                torch._dynamo.graph_break()
                return torch.mm(x, y) + self.bias

            def forward(self, x):
                with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
                    out = self.mm_breaks(x, x)
                return out.float() + 1

        module = MyModule(torch.rand((4, 4), dtype=torch.bfloat16))
        print(torch.compile(module, backend="eager")(torch.rand(4, 4)).dtype)


torch._dynamo.config.nested_graph_breaks = True
T().test_m()
