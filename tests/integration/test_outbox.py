"""The outbox's append against a real Postgres: the row of an INSERT a cancellation cut off
is written again only if absent; anything else that reuses a seq is an error."""

from __future__ import annotations

from typing import Any

import asyncpg
import pytest

from steward.store.database import Database
from steward.store.outbox import AckRow, Outbox, OutboxRow

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


async def test_append_many_writes_rows_of_several_sessions_in_one_statement(
    database: Database,
) -> None:
    outbox = Outbox(database.stream_pool)
    await outbox.ensure_room("r", "relay")
    rows = [
        OutboxRow("s", 1, 1, False, '{"seq": 1}'),
        OutboxRow("t", 1, 2, True, '{"seq": 1, "partial": true}'),
        OutboxRow("s", 2, 3, False, '{"seq": 2}'),
    ]
    await outbox.append_many("r", rows)
    history = await outbox.room_history("r")
    assert [(r.session_id, r.seq, r.room_order, r.partial) for r in history] == [
        ("s", 1, 1, False),
        ("t", 1, 2, True),
        ("s", 2, 3, False),
    ]
    # Again if absent (a retry after a lost connection): the rows there are kept, new ones added.
    await outbox.append_many("r", [*rows, OutboxRow("t", 2, 4, False, "{}")], if_absent=True)
    assert [r.seq for r in await outbox.session_after("r", "t", 0)] == [1, 2]
    with pytest.raises(asyncpg.UniqueViolationError):  # one row reused: none of them written
        await outbox.append_many("r", [OutboxRow("u", 1, 5, False, "{}"), rows[0]])
    assert await outbox.max_seq("u") == 0


async def test_room_history_skips_what_this_participant_or_anyone_acked(database: Database) -> None:
    outbox = Outbox(database.stream_pool)
    await outbox.ensure_room("r", "host")
    await outbox.append_many("r", [OutboxRow("s", q, q, False, "{}") for q in (1, 2, 3)])
    await outbox.record_acks([AckRow("s", 1, "ann", "[]", 0.0), AckRow("s", 2, "bob", "[]", 0.0)])

    async def seqs(**kw: Any) -> list[int]:
        return [r.seq for r in await outbox.room_history("r", **kw)]

    assert await seqs() == [1, 2, 3]
    assert await seqs(skip_acked_by="ann") == [2, 3]
    # Host mode's shared document holds what any host applied.
    assert await seqs(skip_acked_by_anyone=True) == [3]
