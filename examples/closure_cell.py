"""closure_cell.py -- a compiled function mutating a closure cell (nonlocal).

`make_counter` keeps a counter in a cell; the nested closure `bump` updates it
with `nonlocal hits`, and the compiled `step` (backend="eager") calls `bump`.
Dynamo inlines `bump`, buffers the cell store, and replays it after the graph
in the residual bytecode.

What its trace should show (v_side_effects): the cell mutation as applied,
`cell hits store (closure_cell.py:26)`, for compile 0/0 and again for 0/1:
Dynamo guards on the cell's value (`bump.__closure__[0].cell_contents == 0`),
that guard fails on the second call, and the recompile treats `hits` as
dynamic, so the third call reuses 0/1.  No speculation other than each
compile's attempt checkpoint, nothing dropped.  The counter reads 3 after
three calls, as in eager mode, because the replayed store runs on every call
of the compiled code, not only at compile time.
"""

import torch


def make_counter():
    hits = 0

    def bump(n):
        nonlocal hits
        hits += n

    @torch.compile(backend="eager")
    def step(x):
        bump(1)
        return x * 2 + 1

    return step, lambda: hits


def main():
    step, hits = make_counter()
    x = torch.ones(3)
    for _ in range(3):
        x = step(x)
    print("x =", x.tolist())
    print("hits =", hits())


if __name__ == "__main__":
    main()
