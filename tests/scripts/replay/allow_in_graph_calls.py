"""torch._dynamo.allow_in_graph called on a function of the program as it
runs (not as a decorator): Dynamo puts the call in the graph instead of
tracing into it (PyTorch's test_decorators, test_allow_in_graph)."""
import torch


def my_custom_function(x):
    return x + 1


def fn(a, b):
    x = torch.add(a, b)
    x = my_custom_function(x)
    return torch.add(x, 1)


def main():
    torch._dynamo.allow_in_graph(my_custom_function)
    print(torch.compile(fn, backend="eager")(torch.ones(2), torch.ones(2)))


main()
