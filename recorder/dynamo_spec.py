"""dynrec's Dynamo adapter, part two: higher-order-op speculation and side effects.

Runs in the _dynrec namespace right after dynamo.py, whose helpers (emit,
speculation, hook, Guarded, mask, compile_id_now, ...) it uses; install()
in dynamo.py calls install_speculation().
"""


def install_speculation():
    pass
