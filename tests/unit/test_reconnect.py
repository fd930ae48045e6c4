"""Statements that never reached Postgres are sent again while it restarts; one that may have
run (its connection died under it) is not."""

from __future__ import annotations

from typing import Any

import asyncpg
import pytest

from steward.store.outbox import Outbox
from steward.store.reconnect import ReachablePool, when_reachable
from steward.store.usage import UsageRepo


class _Restarting:
    """A pool whose first `down` calls find Postgres gone (its socket missing)."""

    def __init__(self, down: int, error: BaseException | None = None) -> None:
        self.down = down
        self.error = error or FileNotFoundError(2, "No such file or directory")
        self.calls = 0
        self.released: list[str] = []

    async def execute(self, query: str, *args: Any) -> str:
        self.calls += 1
        if self.calls <= self.down:
            raise self.error
        return "INSERT 0 1"

    async def fetchval(self, query: str, *args: Any) -> Any:
        await self.execute(query)
        return 0

    async def acquire(self) -> str:
        await self.execute("connect")
        return "conn"

    async def release(self, conn: str) -> None:
        self.released.append(conn)


async def test_a_statement_refused_at_connect_is_sent_again_once_postgres_is_back() -> None:
    pool = _Restarting(down=3)
    assert await ReachablePool(pool).execute("INSERT …") == "INSERT 0 1"  # type: ignore[arg-type]
    assert pool.calls == 4


async def test_a_pooled_connection_busy_with_the_shutdown_is_refused_before_sending() -> None:
    busy = asyncpg.InternalClientError("cannot switch to state 12; another operation (2) is …")
    pool = _Restarting(down=1, error=busy)
    assert await ReachablePool(pool).execute("INSERT …") == "INSERT 0 1"  # type: ignore[arg-type]
    assert pool.calls == 2


async def test_a_statement_that_may_have_run_is_not_sent_again() -> None:
    pool = _Restarting(down=1, error=asyncpg.ConnectionDoesNotExistError("closed mid-statement"))
    with pytest.raises(asyncpg.ConnectionDoesNotExistError):
        await ReachablePool(pool).execute("INSERT …")  # type: ignore[arg-type]
    assert pool.calls == 1


async def test_a_postgres_gone_for_good_fails_the_caller_within_the_bound() -> None:
    pool = _Restarting(down=10**6, error=ConnectionRefusedError())
    with pytest.raises(ConnectionRefusedError):
        await when_reachable(lambda: pool.execute("SELECT 1"), "probe", within=0.3)
    assert pool.calls > 1


async def test_the_budget_check_before_a_model_call_waits_out_a_restart() -> None:
    """The room's spend is read before every model call: a Postgres restarting under a run
    delays it, and no longer ends it `error: FileNotFoundError`."""
    pool = _Restarting(down=2)
    assert await UsageRepo(pool).spent_today("r1") == 0.0  # type: ignore[arg-type]
    assert pool.calls == 3


async def test_a_transactions_connection_waits_out_a_restart_and_goes_back() -> None:
    """The conversation's, the crew's and the queue's transactions take a connection first:
    refused at connect, nothing was sent, so it is asked for again; it is released after."""
    pool = _Restarting(down=2)
    async with ReachablePool(pool).acquire() as conn:  # type: ignore[arg-type]
        assert conn == "conn" and pool.released == []
    assert pool.calls == 3 and pool.released == ["conn"]


async def test_a_runs_read_of_its_last_seq_waits_out_a_restart() -> None:
    """A run reads its last seq from the outbox as it starts sending: a Postgres restarting
    then delays the run instead of ending it `error: FileNotFoundError`."""
    pool = _Restarting(down=2)
    assert await Outbox(pool).max_seq("s-1") == 0  # type: ignore[arg-type]
    assert pool.calls == 3
