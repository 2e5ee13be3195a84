# Calls tick() exactly 100000 times, for counting frames under --all-frames.
def tick(i):
    return i + 1


total = 0
for i in range(100000):
    total = tick(total)
print(total)
