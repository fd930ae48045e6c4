"""Process liveness in Postgres: a dead steward is noticed without waiting for its leases.

A steward process holds a session advisory lock on (`NAMESPACE`, its key) over a connection
of its own, not from a pool. A process killed outright (SIGKILL, a crash) closes its sockets
at once; Postgres ends that backend and drops the lock, so a lease stored with the key
(`room_leases.owner_key`) whose lock is no longer held counts as lapsed (steward/store/
leases.py). A frozen process keeps its socket and its lock: its leases lapse by expiry only.
A process whose connection merely dropped looks dead until the lock is back; another steward
may take its rooms meanwhile, and the fencing token stops the old one's appends.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets

import asyncpg
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, wait_exponential

from steward.obs.logging import get_logger
from steward.task_set import TaskSet

log = get_logger(__name__)

# Fixed first half of every liveness lock (two-int form); the second half is the key.
NAMESPACE = 0x57E3A4E

# The keys whose lock is held, as a subquery: a process's lock shows in pg_locks with the
# first int in classid, the second in objid and objsubid 2 (Postgres docs, pg_locks).
HELD_KEYS = f"""(SELECT objid::bigint FROM pg_locks
  WHERE locktype = 'advisory' AND classid = {NAMESPACE} AND objsubid = 2 AND granted
    AND database = (SELECT oid FROM pg_database WHERE datname = current_database()))"""


def owner_gone(table: str) -> str:
    """SQL: the row's owner stored a key and its lock is no longer held."""
    return f"({table}.owner_key IS NOT NULL AND {table}.owner_key NOT IN {HELD_KEYS})"


class KeyTaken(Exception):
    """Another session holds the lock (a key collision, or our old backend not yet gone)."""


def _log_retry(state: RetryCallState) -> None:
    err = state.outcome.exception() if state.outcome else None
    log.warning("liveness_reconnect_failed", attempt=state.attempt_number, error=repr(err))


class Liveness:
    """The lock and its connection; re-opened (same key) whenever the connection drops."""

    def __init__(self, url: str, *, probe_s: float = 1.0) -> None:
        self.url = url
        self.probe_s = probe_s
        # Positive int4: pg_locks shows the halves as oid (unsigned).
        self.key = secrets.randbelow(2**31 - 2) + 1
        self._conn: asyncpg.Connection | None = None
        # Bumped whenever the lock may have been lost; read by leases in other threads
        # (`unbroken_since`): a lease cannot be taken before expiry while it stays the same.
        self.epoch = 0
        self._dropped = asyncio.Event()
        self._tasks = TaskSet("liveness_crashed")

    @property
    def held(self) -> bool:
        return self._conn is not None and not self._conn.is_closed()

    def unbroken_since(self, epoch: int) -> bool:
        """Held all along since `epoch` was read."""
        return self.epoch == epoch and self.held

    def _on_drop(self) -> None:
        self.epoch += 1
        self._dropped.set()

    async def start(self) -> Liveness:
        """Take the lock (a fresh key on a collision) and keep it."""
        for _ in range(5):
            try:
                await self._lock()
                break
            except KeyTaken:
                self.key = secrets.randbelow(2**31 - 2) + 1
        else:
            raise RuntimeError("no free liveness key after 5 tries")
        log.info("liveness_held", key=self.key)
        self._tasks.spawn(self._keep())
        return self

    async def close(self) -> None:
        await self._tasks.close()
        if self._conn is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._conn.close(), 2)
            self._conn = None

    async def _lock(self) -> None:
        conn = await asyncpg.connect(self.url)
        try:
            if not await conn.fetchval("SELECT pg_try_advisory_lock($1, $2)", NAMESPACE, self.key):
                raise KeyTaken(str(self.key))
        except BaseException:
            conn.terminate()
            raise
        self._dropped.clear()
        conn.add_termination_listener(lambda _c: self._on_drop())
        self._conn = conn

    async def _keep(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._dropped.wait(), self.probe_s)
            if await self._alive():
                continue
            self.epoch += 1
            log.warning("liveness_lost", key=self.key)
            if self._conn is not None:
                self._conn.terminate()
                self._conn = None
            # Same key: the leases carry it. Our old backend may take a moment to go.
            async for attempt in AsyncRetrying(
                retry=retry_if_exception_type((OSError, asyncpg.PostgresError, KeyTaken)),
                wait=wait_exponential(multiplier=0.1, max=2),
                before_sleep=_log_retry,
            ):
                with attempt:
                    await self._lock()
            log.info("liveness_regained", key=self.key)

    async def _alive(self) -> bool:
        conn = self._conn
        if conn is None or conn.is_closed():
            return False
        try:
            await asyncio.wait_for(conn.fetchval("SELECT 1"), max(self.probe_s, 1.0))
        except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError):
            return False
        return True


# The liveness this process's stewards store in their leases (the worker holds one for all
# of its jobs, each in its own thread and loop); None: each service holds its own.
_process: Liveness | None = None


def set_process_liveness(liveness: Liveness | None) -> None:
    global _process
    _process = liveness


def process_liveness() -> Liveness | None:
    return _process
