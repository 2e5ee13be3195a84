"""A decorator in a module of its own: functools.wraps gives the wrapper the
wrapped function's __module__ and __qualname__, while its code runs with
this module's globals (OFFSET)."""
import functools

OFFSET = 3.0


def shifted(fn):
    @functools.wraps(fn)
    def wrapper(x):
        return fn(x) + OFFSET

    return wrapper
