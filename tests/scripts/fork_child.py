# Forks a child that ends with sys.exit(3) (running atexit and the C exit
# handlers in the child), then calls work() 100000 times in the parent.
import os
import sys


def work(i):
    return i + 1


pid = os.fork()
if pid == 0:
    print("child", flush=True)
    sys.exit(3)
_, status = os.waitpid(pid, 0)
print("parent saw", os.waitstatus_to_exitcode(status), flush=True)
total = 0
for _ in range(100000):
    total = work(total)
print(total)
