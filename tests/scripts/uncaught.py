# Dies of an uncaught exception raised two calls deep: the traceback,
# chained cause included, must match plain python's byte for byte.
import sys


def parse(text):
    try:
        return int(text)
    except ValueError as exc:
        raise RuntimeError("cannot parse %r" % text) from exc


def main():
    print("parsing", flush=True)
    print("stderr before", file=sys.stderr, flush=True)
    return parse("not a number")


main()
