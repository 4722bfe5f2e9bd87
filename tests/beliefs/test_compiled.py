"""The compiled modules: all of retrieval or none, and never older than their sources."""

from __future__ import annotations

import importlib
import os
import shutil
import sysconfig
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest

import beliefs
from beliefs.compiled import MARGIN_S, PACKAGES, StaleCompiledModule, check, stale

ROOT = Path(beliefs.__file__).resolve().parent
SUFFIX = EXTENSION_SUFFIXES[0]
INTERPRETED = {"index/encoder.py", "index/semantic.py"}  # setup.py leaves these to numpy


def _package(tmp_path: Path, source_age: float, extension_age: float) -> Path:
    root = tmp_path / "beliefs"
    (root / "search").mkdir(parents=True)
    source = root / "search" / "matcher.py"
    source.write_text("")
    extension = root / "search" / f"matcher{SUFFIX}"
    extension.write_bytes(b"")
    now = source.stat().st_mtime
    os.utime(source, (now - source_age, now - source_age))
    os.utime(extension, (now - extension_age, now - extension_age))
    return root


def test_a_source_edited_after_its_module_was_compiled_stops_the_import(tmp_path: Path) -> None:
    root = _package(tmp_path, source_age=0.0, extension_age=3600.0)
    assert stale(root) == [root / "search" / "matcher.py"]
    with pytest.raises(StaleCompiledModule, match=r"beliefs/search/matcher\.py .*make install"):
        check(root)


def test_sources_written_with_their_extensions_are_not_stale(tmp_path: Path) -> None:
    # an install writes both in one go, in either order
    written = _package(tmp_path / "a", source_age=0.0, extension_age=MARGIN_S / 2)
    older = _package(tmp_path / "b", source_age=3600.0, extension_age=0.0)
    assert stale(written) == []
    check(older)


def _compiled(module: str) -> bool:
    path = importlib.import_module(module).__file__
    assert path is not None
    return path.endswith(SUFFIX)


def test_retrieval_is_compiled_whole_or_not_at_all() -> None:
    modules = [
        "beliefs." + p.relative_to(ROOT).with_suffix("").as_posix().replace("/", ".")
        for package in PACKAGES
        for p in sorted((ROOT / package).glob("*.py"))
        if p.name != "__init__.py" and p.relative_to(ROOT).as_posix() not in INTERPRETED
    ]
    compiled = {m for m in modules if _compiled(m)}
    assert compiled in (set(), set(modules)), sorted(set(modules) - compiled)
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    headers = Path(sysconfig.get_paths()["include"]) / "Python.h"
    wanted = (
        os.environ.get("TENURE_COMPILE", "1") != "0"
        and shutil.which(compiler) is not None
        and headers.exists()
    )
    if os.environ.get("CI", "").lower() == "true" and wanted:  # `make test` compiles there
        assert compiled == set(modules)
    assert not _compiled("beliefs.index.encoder")
