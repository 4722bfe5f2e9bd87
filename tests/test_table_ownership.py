"""Each package owns its tables: it creates them with its own named migrations, and no other
package runs SQL against them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from beliefs.documents.sources import MIGRATIONS as DOCUMENTS
from beliefs.store.feed import CHANGE_FEED
from beliefs.store.migrations import MIGRATIONS as BELIEFS
from beliefs.store.migrations import NUMBERED, Migration, check
from compaction.migrations import MIGRATIONS as COMPACTION
from extractor.migrations import MIGRATIONS as EXTRACTOR
from proxy.gateway.tables import MIGRATIONS as GATEWAY
from proxy.security.tables import MIGRATIONS as SECURITY

ROOT = Path(__file__).resolve().parents[1]
SETS: dict[str, list[Migration]] = {
    "beliefs": [*BELIEFS, CHANGE_FEED],
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


@pytest.mark.parametrize("package", sorted(SETS))
def test_migration_names_are_unique_within_a_package(package: str) -> None:
    migrations = SETS[package]
    check(migrations)  # raises on a name used twice or not lower_snake_case
    assert len({m.package for m in migrations}) == 1, "one package name per list"


def test_each_list_names_its_own_package() -> None:
    names = [ms[0].package for ms in SETS.values()]
    assert len(names) == len(set(names)), names


def test_every_released_number_names_a_migration() -> None:
    """The numbered ledger of earlier releases is rewritten by these names: each must exist."""
    keys = {m.key for ms in SETS.values() for m in ms}
    assert set(NUMBERED.values()) <= keys
    assert len(set(NUMBERED.values())) == len(NUMBERED)


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
