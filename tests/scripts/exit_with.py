# Ends through sys.exit with what argv[1] says: an integer status, or a
# message (which CPython prints to stderr, exiting with status 1).
import sys

print("exiting with", sys.argv[1])
sys.stdout.flush()
arg = sys.argv[1]
sys.exit(int(arg) if arg.lstrip("-").isdigit() else arg)
