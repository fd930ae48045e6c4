"""The outbox's append against a real Postgres: the row of an INSERT a cancellation cut off
is written again only if absent; anything else that reuses a seq is an error."""

from __future__ import annotations

import asyncpg
import pytest

from steward.store.database import Database
from steward.store.outbox import Outbox

pytestmark = pytest.mark.integration


async def test_append_if_absent_skips_only_the_same_row(database: Database) -> None:
    outbox = Outbox(database.stream_pool)
    await outbox.ensure_room("r", "relay")
    row = ("r", "s", 1, 1, False, '{"seq": 1}')
    await outbox.append(*row)
    await outbox.append(*row, if_absent=True)  # the finisher of a cut-off send: no-op
    await outbox.append("r", "s", 2, 2, False, '{"seq": 2}', if_absent=True)  # absent: written
    assert [r.seq for r in await outbox.session_after("r", "s", 0)] == [1, 2]
    with pytest.raises(asyncpg.UniqueViolationError):  # a plain append never overwrites
        await outbox.append(*row)
