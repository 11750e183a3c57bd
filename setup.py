"""The build step pyproject.toml cannot declare: quill's hot modules compiled by mypyc (issue 28).

The modules listed in host/quill/compiled.py are compiled to C extensions, one shared library
for the group (quill/_mypyc__mypyc.*.so) and a small extension per module, beside their .py files.
Anything that stops the build falls back to pure Python with a message saying why: QUILL_PURE_PYTHON=1,
mypyc missing from the build environment, a module mypy rejects, or no working C compiler.
`make .venv/.installed` prints which one is installed (python -m quill.compiled).
"""
import os
import runpy
import sys

from setuptools import setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
COMPILED = runpy.run_path(os.path.join(HERE, "host", "quill", "compiled.py"))


def fallback(reason: str) -> list:
    print(f"quill: installing pure Python, without compiled modules: {reason}", file=sys.stderr)
    # an editable install keeps the extensions of an earlier build beside the .py files: they go
    for module in (*COMPILED["MODULES"], COMPILED["GROUP"] + "__mypyc"):
        path = COMPILED["extension_path"](module)
        if os.path.exists(path):
            os.remove(path)
    return []


def compiled_extensions() -> list:
    if os.environ.get(COMPILED["PURE_ENV"]):
        return fallback(f"{COMPILED['PURE_ENV']} is set")
    try:
        from mypyc.build import mypycify
    except ImportError as e:
        return fallback(f"mypyc is not importable ({e})")
    paths = [os.path.join("host", *m.split(".")) + ".py" for m in COMPILED["MODULES"]]
    try:
        # mypy reads its options (mypy_path, overrides) from pyproject.toml in this directory
        return mypycify(paths, group_name=COMPILED["GROUP"], target_dir=os.path.join("build", "mypyc"))
    except (Exception, SystemExit) as e:  # mypy's errors end in SystemExit
        return fallback(f"mypyc failed ({e!r})")


class BuildExtOrFallBack(build_ext):
    """A missing or failing C compiler leaves the modules pure Python (quill.compiled sees the
    missing extensions and loads every .py) instead of failing the install."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as e:  # CCompilerError, DistutilsExecError, DistutilsPlatformError, OSError
            fallback(f"the C build failed ({e!r})")


setup(ext_modules=compiled_extensions(), cmdclass={"build_ext": BuildExtOrFallBack})
