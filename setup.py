"""Build dynrec for the interpreter running this build (`pip install .`).

The binary embeds libpython, so it is built against the base interpreter
of the Python that builds the wheel (the Makefile reads its python-config)
and is tagged for that Python and platform.  The venv it records in is
found at run time from where the binary is installed (recorder/run.c,
dr_run_choose_python), never baked in.  Missing system libraries are named
with the command that installs them.
"""
import os
import re
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


def _version():
    with open(os.path.join(HERE, "schema", "trace.h")) as f:
        return re.search(r'#define DR_VERSION "([^"]+)"', f.read()).group(1)


class BuildWithMake(build_py):
    def run(self):
        super().run()
        if not (3, 10) <= sys.version_info[:2] <= (3, 13):
            sys.exit("dynrec supports CPython 3.10 to 3.13, not %d.%d" % sys.version_info[:2])
        build = os.path.join(HERE, "build", "pip-py%d.%d" % sys.version_info[:2])
        ext = "_dynrec" + sysconfig.get_config_var("EXT_SUFFIX")
        cmd = ["make", "--no-print-directory", "PY=" + sys.executable, "DEFAULT_VENV=",
               "BUILD=" + build, os.path.join(build, "dynrec"),
               os.path.join(build, "pkg", "dynrec", ext)]
        if subprocess.call(cmd, cwd=HERE) != 0:
            sys.exit("dynrec: the build failed; the system libraries it needs (SQLite, zstd, "
                     "libseccomp, ncurses, a compiler) install with: sh tools/setup.sh --packages")
        dest = os.path.join(self.build_lib, "dynrec", "_bin")
        os.makedirs(dest, exist_ok=True)
        shutil.copy2(os.path.join(build, "dynrec"), os.path.join(dest, "dynrec"))
        # The in-process recorder (import dynrec; dynrec.record) and the
        # marker that the package is typed.
        pkg = os.path.join(self.build_lib, "dynrec")
        shutil.copy2(os.path.join(build, "pkg", "dynrec", ext), os.path.join(pkg, ext))
        for name in ("py.typed", "_dynrec.pyi"):
            shutil.copy2(os.path.join(HERE, "python", "dynrec", name), os.path.join(pkg, name))


class BinaryDistribution(Distribution):
    """A wheel for one Python and platform: the binary is compiled code."""

    def has_ext_modules(self):
        return True


setup(version=_version(), cmdclass={"build_py": BuildWithMake}, distclass=BinaryDistribution)
