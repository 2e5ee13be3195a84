# Reads stdin line by line and echoes each one numbered and upper-cased,
# then the count on stderr.
import sys

n = 0
for n, line in enumerate(sys.stdin, 1):
    print("%d: %s" % (n, line.rstrip("\n").upper()))
print("lines:", n, file=sys.stderr)
