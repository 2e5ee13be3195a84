"""replay scenario: an object of a class with its own __getattribute__
(which reads an attribute the object does not have until its __dict__ is
filled), as PyTorch's test_misc test_user_getattribute has: the replay
fills its __dict__ without calling the class's code."""

import torch


def make():
    class MyObject:
        def __init__(self) -> None:
            self.custom_dict = {"a": torch.ones(2, 2)}
            self.my_number = 42

        def __getattribute__(self, name):
            custom_dict = super().__getattribute__("custom_dict")
            if name in custom_dict:
                return custom_dict[name]
            return super().__getattribute__(name)

        def run(self, x):
            return self.my_number * x + self.a * x

    return MyObject()


@torch.compile(backend="eager")
def fn(obj, x):
    return obj.run(x)


print(fn(make(), torch.ones(2, 2)).tolist())
