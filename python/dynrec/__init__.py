"""dynrec: record and replay PyTorch Dynamo.

The tool is one C binary, shipped inside this package (``dynrec/_bin``)
and built by ``pip install`` for this interpreter.  ``dynrec ...`` on the
venv's PATH and ``python -m dynrec ...`` both run it.
"""
import os

__all__ = ["binary"]


def binary():
    """The path of the dynrec binary this package carries."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin", "dynrec")
