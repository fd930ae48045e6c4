"""The outbox INSERT across a Postgres restart: waited out, a committed duplicate is success."""

from __future__ import annotations

import asyncpg
import pytest

from steward.store.outbox import Outbox
from tests.support.outbox_fakes import FlakyPool


async def test_outbox_append_waits_out_a_postgres_restart() -> None:
    busy = asyncpg.InternalClientError("cannot switch to state 12; another operation (2) is …")
    restarting = [asyncpg.CannotConnectNowError("starting up"), OSError("refused"), busy]
    pool = FlakyPool(restarting)
    await Outbox(pool, retry_s=5).append("r", "s", 1, 1, False, "{}")  # type: ignore[arg-type]
    assert pool.calls == 4
    # The attempt that lost its connection had committed: the retry's duplicate is success.
    lost = [asyncpg.ConnectionDoesNotExistError("closed"), asyncpg.UniqueViolationError("dup")]
    pool = FlakyPool(lost)
    await Outbox(pool, retry_s=5).append("r", "s", 1, 1, False, "{}")  # type: ignore[arg-type]
    assert pool.calls == 2
    # A first-attempt duplicate is a real error (two writers of one seq), and so is a
    # restart that outlasts retry_s.
    with pytest.raises(asyncpg.UniqueViolationError):
        await Outbox(FlakyPool([asyncpg.UniqueViolationError("dup")]), retry_s=5).append(  # type: ignore[arg-type]
            "r", "s", 1, 1, False, "{}"
        )
    down = FlakyPool([OSError("refused")] * 1000)
    with pytest.raises(OSError):
        await Outbox(down, retry_s=0.3).append("r", "s", 1, 1, False, "{}")  # type: ignore[arg-type]
