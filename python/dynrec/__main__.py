"""`python -m dynrec ARGS` and the `dynrec` console script: exec the binary.

The process becomes the binary (same pid, environment, stdio and exit
status), so a recording made this way is the one `dynrec run` makes.
"""
import os
import sys

from dynrec import binary


def main() -> int:
    exe = binary()
    if not os.access(exe, os.X_OK):
        sys.stderr.write("dynrec: %s is missing; reinstall the package"
                         " (pip install --force-reinstall dynrec)\n"
                         % exe)
        return 69
    # argv[0] is the binary itself: `dynrec --version` and the recorded
    # command line name what runs.
    os.execv(exe, [exe] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
