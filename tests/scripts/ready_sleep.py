# Says "ready" (flushed, so the test knows the script is running) and
# sleeps, waiting for the test's signal.
import time

print("ready", flush=True)
time.sleep(30)
print("woke up")
