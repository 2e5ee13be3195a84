"""Two lambdas of one line share their file, qualname and first line:
compiled as frames (torch.compile of each), and as values a compiled
function calls (a tuple of them), each must be itself in the replay."""
import torch

inc, dbl = torch.compile(lambda x: x + 1, backend="eager"), torch.compile(lambda x: x * 2, backend="eager")


@torch.compile(backend="eager")
def apply_all(x, fns):
    for fn in fns:
        x = fn(x)
    return x


def main():
    pair = (lambda x: x - 3, lambda x: x / 4)
    print(inc(torch.ones(2)), dbl(torch.ones(2)))
    print(apply_all(torch.ones(2), pair))
    print(apply_all(torch.ones(2), pair[::-1]))


main()
