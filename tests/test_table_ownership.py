"""Each package owns its tables: it creates them with its own migrations, and no other package
runs SQL against them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from beliefs.documents.sources import MIGRATIONS as DOCUMENTS
from beliefs.store.migrations import MIGRATIONS as BELIEFS
from beliefs.store.migrations import Migration
from compaction.migrations import MIGRATIONS as COMPACTION
from extractor.migrations import MIGRATIONS as EXTRACTOR
from proxy.gateway.tables import MIGRATIONS as GATEWAY
from proxy.security.tables import MIGRATIONS as SECURITY

ROOT = Path(__file__).resolve().parents[1]
SETS: dict[str, list[Migration]] = {
    "beliefs": BELIEFS,
    "beliefs/documents": DOCUMENTS,  # the sources of ingested documents, within beliefs
    "extractor": EXTRACTOR,
    "compaction": COMPACTION,
    "proxy": GATEWAY,
    "proxy/security": SECURITY,  # access owns its tables within proxy
}
_CREATE = re.compile(r"CREATE TABLE (?:IF NOT EXISTS )?(\w+)", re.I)
_TOUCH = r"\b(?:FROM|INTO|UPDATE|JOIN|TABLE)\s+{table}\b"


def _tables(migrations: list[Migration]) -> set[str]:
    return {t for m in migrations for s in m.statements for t in _CREATE.findall(s)}


OWNERS = {table: package for package, ms in SETS.items() for table in _tables(ms)}


def test_migration_numbers_are_unique_across_packages() -> None:
    numbers = [m.number for ms in SETS.values() for m in ms]
    assert len(numbers) == len(set(numbers)), sorted(numbers)


def test_every_table_has_one_owner() -> None:
    created = [t for ms in SETS.values() for t in _tables(ms)]
    assert len(created) == len(set(created))
    assert {"beliefs", "jobs", "injections", "compaction_runs", "access_tokens"} <= set(OWNERS)


@pytest.mark.parametrize("package", sorted(SETS))
def test_no_package_runs_sql_on_another_packages_tables(package: str) -> None:
    foreign = {t for t, owner in OWNERS.items() if owner != package}
    offenders = []
    nested = [ROOT / p for p in SETS if p.startswith(package + "/")]
    for path in sorted((ROOT / package).rglob("*.py")):
        if any(path.is_relative_to(inner) for inner in nested):
            continue  # a package within this one owns its own tables
        text = path.read_text(encoding="utf-8")
        for table in foreign:
            if re.search(_TOUCH.format(table=table), text):
                offenders.append(f"{path.relative_to(ROOT)} uses {table} ({OWNERS[table]}'s)")
    assert offenders == []
