"""Whether the compiled modules beside their sources still are those sources.

The build compiles retrieval's modules into C extensions beside their sources (setup.py), and
Python imports an extension in place of the source beside it. A source edited since (a pull, a
checkout, an edit) would then not run, silently, and compiled modules call each other's
compiled code directly, so one stale module cannot be left out alone: `import beliefs` fails
at once and says which file and what to run.
"""

from __future__ import annotations

from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

PACKAGES = ("search", "index", "text", "context")
# An install writes sources and extensions in one go, in either order: a source newer by less
# than this was written with its extension, not edited since.
MARGIN_S = 2.0


class StaleCompiledModule(ImportError):
    """A module's source changed after it was compiled."""


def stale(root: Path) -> list[Path]:
    """The sources under `root`'s compiled packages that are newer than their extension."""
    out = []
    for package in PACKAGES:
        for suffix in EXTENSION_SUFFIXES:
            for extension in (root / package).glob(f"*{suffix}"):
                source = extension.with_name(extension.name.removesuffix(suffix) + ".py")
                if (
                    source.exists()
                    and source.stat().st_mtime > extension.stat().st_mtime + MARGIN_S
                ):
                    out.append(source)
    return out


def check(root: Path) -> None:
    """Raise StaleCompiledModule when a compiled module's source is newer than it."""
    changed = stale(root)
    if changed:
        names = ", ".join(str(p.relative_to(root.parent)) for p in changed[:3])
        more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
        raise StaleCompiledModule(
            f"{names}{more} changed after it was compiled: run `make install` to compile "
            "again (TENURE_COMPILE=0 make install for pure Python)"
        )
