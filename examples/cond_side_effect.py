"""cond_side_effect.py -- side effects inside torch.cond branches.

Two compiled functions (backend="eager") call torch.cond on a tensor predicate,
so Dynamo speculates both branches as subgraphs and restores its side-effect
state after each one.

What its trace should show (v_speculation, v_side_effects):
  * `flip` (compile 0/0): true_fn sets `state.busy = True` and back to False.
    Dynamo defers that outer-scope store and lets it pass because it is undone
    inside the branch.  Speculation: a 'checkpoint' for true_fn, its
    'rollback' (side effects restored to the checkpoint, side_effects 1 at the
    branch's end, 0 after), the same pair for false_fn, then a 'merge' of the
    two branches.  Side effects: `attribute G['state'].busy store` dropped.
  * `logged` (compile 1/0): true_fn appends to the global list `log`.
    Dynamo refuses the mutation ("HOP: Unsafe side effect"), and torch.cond
    cannot fall back to eager, so torch.compile raises
    UncapturedHigherOrderOpError to the caller (caught below).  Speculation:
    a 'checkpoint' for true_fn and its 'rollback' (speculation failed, branch
    state discarded).  Side effects: `list G['log'] append` dropped.
  Nothing is applied: no side effect survives a cond branch.
"""

import torch


class State:
    def __init__(self):
        self.busy = False


state = State()
log = []


def true_fn(x):
    state.busy = True
    y = x.sin() + 1
    state.busy = False
    return y


def false_fn(x):
    return x.cos() - 1


@torch.compile(backend="eager")
def flip(x):
    return torch.cond(x.sum() > 0, true_fn, false_fn, (x,))


def logging_true_fn(x):
    log.append("true branch")
    return x.sin()


@torch.compile(backend="eager")
def logged(x):
    return torch.cond(x.sum() > 0, logging_true_fn, false_fn, (x,))


def main():
    x = torch.arange(4, dtype=torch.float32)
    print("flip(x)  =", [round(v, 4) for v in flip(x).tolist()])
    print("flip(-x) =", [round(v, 4) for v in flip(-x).tolist()])
    print("state.busy =", state.busy)
    try:
        logged(x)
        print("logged compiled")
    except Exception as exc:  # torch.cond cannot graph-break: the error reaches us
        print("logged raised", type(exc).__name__)
    print("log =", log)


if __name__ == "__main__":
    main()
