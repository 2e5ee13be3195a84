# Calls spin_once() in a loop for up to 20 s; the test kills it long before.
import time


def spin_once(i):
    return i * 2


deadline = time.monotonic() + 20
i = 0
while time.monotonic() < deadline:
    for _ in range(1000):
        i = spin_once(i) % 1000003
print("not killed", i)
