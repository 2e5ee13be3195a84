# Prints what a script sees of how it was started: argv, __name__,
# sys.path[0] and __file__ must be the same under `dynrec run` as under python.
import sys

print("argv", sys.argv)
print("name", __name__)
print("path0", sys.path[0])
print("file", __file__)
