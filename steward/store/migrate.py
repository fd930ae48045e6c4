"""Migration runner: numbered SQL files applied in order, once, under an advisory lock."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import asyncpg
from asyncpg.pool import PoolConnectionProxy

from steward.config import PROJECT_ROOT
from steward.obs.logging import get_logger

# Installed from the wheel, the migrations ship inside this package; a checkout keeps them at
# the top of the repository.
_PACKAGED_MIGRATIONS = Path(__file__).with_name("migrations")
MIGRATIONS_DIR = (
    _PACKAGED_MIGRATIONS if _PACKAGED_MIGRATIONS.is_dir() else PROJECT_ROOT / "migrations"
)
# Arbitrary but fixed: every steward process serialises migrations on this key.
ADVISORY_LOCK_KEY = 0x57E3A4D
_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")

log = get_logger(__name__)


@dataclass(frozen=True)
class Migration:
    """One numbered SQL migration file: its version, name and text."""

    version: int
    name: str
    sql: str


def discover(directory: Path = MIGRATIONS_DIR) -> list[Migration]:
    found: list[Migration] = []
    for path in sorted(directory.glob("*.sql")):
        m = _NAME.match(path.name)
        if not m:
            raise ValueError(f"migration file name must look like 0001_name.sql: {path.name}")
        found.append(Migration(int(m.group(1)), path.name, path.read_text()))
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise ValueError(f"duplicate migration numbers in {directory}")
    return found


async def migrate(
    conn: asyncpg.Connection | PoolConnectionProxy, directory: Path = MIGRATIONS_DIR
) -> list[str]:
    """Apply pending migrations; returns the names applied. Safe to run concurrently."""
    migrations = discover(directory)
    applied_now: list[str] = []
    await conn.execute("SELECT pg_advisory_lock($1)", ADVISORY_LOCK_KEY)
    try:
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version integer PRIMARY KEY, name text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        done = {r["version"] for r in await conn.fetch("SELECT version FROM schema_migrations")}
        for mig in migrations:
            if mig.version in done:
                continue
            async with conn.transaction():
                await conn.execute(mig.sql)
                await conn.execute(
                    "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                    mig.version,
                    mig.name,
                )
            log.info("migration_applied", name=mig.name)
            applied_now.append(mig.name)
    finally:
        await conn.execute("SELECT pg_advisory_unlock($1)", ADVISORY_LOCK_KEY)
    return applied_now
