"""`steward db migrate`: apply pending migrations."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from steward.commands.setup import print_json, setup
from steward.store.database import open_database


async def _migrate() -> list[str]:
    settings = setup()
    db = await open_database(settings, run_migrations=False)
    try:
        from steward.store.migrate import migrate

        async with db.pool.acquire() as conn:
            return await migrate(conn)
    finally:
        await db.close()


def _run(args: argparse.Namespace) -> int:
    applied = asyncio.run(_migrate())
    print_json({"applied": applied})
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("db", help="database tasks")
    dbsub = p.add_subparsers(dest="db_command", metavar="TASK", required=True)
    m = dbsub.add_parser("migrate", help="apply pending SQL migrations from migrations/")
    m.set_defaults(handler=_run)
