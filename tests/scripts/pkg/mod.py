# Run as `-m pkg.mod`: argv[0] is this file's full path, __name__ is
# __main__ and __spec__.name is the dotted name.
import sys

print("argv", sys.argv)
print("name", __name__)
print("spec", __spec__.name)
print("path0", sys.path[0])
