# Writes to stdout and stderr in several ways (print, sys.stdout.write,
# os.write on the descriptors, a flush in between): what `dynrec run` keeps
# of the program's output must be exactly what a plain python run writes.
import os
import sys

print("line one")
sys.stdout.write("no newline, then ")
sys.stdout.flush()
os.write(1, b"raw bytes\n")
print("to stderr", file=sys.stderr)
os.write(2, b"raw stderr\n")
for i in range(3):
    print("count", i)
print("\u00e9t\u00e9 \u2713")
