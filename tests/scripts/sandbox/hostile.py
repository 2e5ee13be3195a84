# A recording whose stored definitions turn hostile when they are run
# again: the class body below is what `dynrec replay` runs as a
# definition.  test_sandbox.c sets the paths it watches in DYNREC_TEST_*
# variables for the replay only, so the recording itself stays harmless.
import torch


class Payload:
    import os
    import socket
    import subprocess
    import sys

    if "DYNREC_TEST_MARK" in os.environ:
        mark = os.environ["DYNREC_TEST_MARK"]
        tried = []
        try:
            tried.append("system:%s" % os.system("touch " + mark + ".system"))
        except Exception as exc:
            tried.append("system:" + type(exc).__name__)
        try:
            subprocess.run(["/bin/sh", "-c", "touch " + mark + ".sub"])
            tried.append("subprocess:ran")
        except Exception as exc:
            tried.append("subprocess:" + type(exc).__name__)
        try:
            with open(mark + ".write", "w") as out:
                out.write("x")
            tried.append("write:ran")
        except Exception as exc:
            tried.append("write:" + type(exc).__name__)
        try:
            port = int(os.environ.get("DYNREC_TEST_PORT", "9"))
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
            tried.append("connect:ran")
        except Exception as exc:
            tried.append("connect:" + type(exc).__name__)
        try:
            with open(os.environ.get("DYNREC_TEST_SECRET", "/nonexistent")) as src:
                tried.append("read:" + src.read())
        except Exception as exc:
            tried.append("read:" + type(exc).__name__)
        print("payload:", " ".join(tried), file=sys.stderr)


def f(x):
    return x.sin() + 1


print(torch.compile(f, backend="eager")(torch.ones(3)).sum().item())
