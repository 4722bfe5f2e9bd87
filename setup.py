"""The build: retrieval's modules compiled to C with mypyc, where a C compiler is at hand.

The modules of `beliefs.search`, `beliefs.index`, `beliefs.text` and `beliefs.context` are
plain Python typed for `mypy --strict`; mypyc compiles each into a C extension beside its
source, which Python imports in its place, and assembling a turn's memory takes 0.5-0.8x as
long as interpreted (docs/benchmarks.md). Nothing else changes: the sources are what runs without a
compiler, and what the tests read.

`TENURE_COMPILE=0` installs pure Python. Without a C compiler, Python's headers or mypyc the
install is pure Python too, and says why. A source edited after its module was compiled makes
`import beliefs` fail with what to run (`beliefs.compiled`): `make install` compiles again.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import sysconfig
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).resolve().parent
PACKAGES = ("beliefs/search", "beliefs/index", "beliefs/text", "beliefs/context")
# numpy's arrays do the sentence encoder's work: compiling its Python gains nothing
INTERPRETED = frozenset(["beliefs/index/encoder.py", "beliefs/index/semantic.py"])


def compiled_sources() -> list[str]:
    """The modules to compile, as paths relative to the project."""
    return sorted(
        path.relative_to(ROOT).as_posix()
        for package in PACKAGES
        for path in (ROOT / package).glob("*.py")
        if path.name != "__init__.py" and path.relative_to(ROOT).as_posix() not in INTERPRETED
    )


def _remove_compiled() -> None:
    """Take away what an earlier install compiled in place: Python would import it."""
    for suffix in EXTENSION_SUFFIXES:
        for package in PACKAGES:
            for path in (ROOT / package).glob(f"*{suffix}"):
                path.unlink()
        for path in ROOT.glob(f"tenure__mypyc*{suffix}"):
            path.unlink()


def _why_pure() -> str | None:
    """Why this install is pure Python ("" when asked for), or None to compile."""
    if os.environ.get("TENURE_COMPILE", "1") == "0":
        return ""
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        return f"no C compiler ({compiler})"
    headers = Path(sysconfig.get_paths()["include"]) / "Python.h"
    if not headers.exists():
        return f"no Python headers ({headers}; Debian's python3-dev)"
    if importlib.util.find_spec("mypyc") is None:
        return "mypyc is not installed"
    return None


# pip asks for the metadata first: no extension is built then, so mypyc's type check and C
# code would be thrown away (about ten seconds each time)
METADATA_ONLY = frozenset(["egg_info", "dist_info"])


def extensions() -> list[object]:
    if METADATA_ONLY.intersection(sys.argv[1:]):
        return []
    why = _why_pure()
    if why is not None:
        if why:
            print(f"tenure: {why}: installing pure Python", file=sys.stderr)
        _remove_compiled()
        return []
    from mypyc.build import mypycify

    cwd = os.getcwd()
    os.chdir(ROOT)  # mypyc names modules by their paths from here
    try:
        # The build's environment holds none of the dependencies: their types are Any there,
        # which `mypy --strict` (pyproject.toml, run by `make typecheck`) would refuse
        options = ["--config-file=", "--ignore-missing-imports", "--follow-imports=silent"]
        sources = compiled_sources()
        return list(mypycify([*options, *sources], opt_level="3", group_name="tenure"))
    finally:
        os.chdir(cwd)


setup(ext_modules=extensions())
