"""The envelope outbox, acks, rooms and agent sessions (tables from 0001_init.sql).

Every envelope is written here before it is sent, so reconnecting browsers and late joiners
replay from Postgres and a restarted steward continues each room's order.
"""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg
from tenacity import (
    AsyncRetrying,
    retry_if_exception_type,
    stop_after_delay,
    wait_exponential,
)

from steward.obs.logging import get_logger
from steward.store.leases import LeaseLost, regain

log = get_logger(__name__)

# Errors of a Postgres that is restarting or briefly unreachable: the append is retried.
TRANSIENT = (
    asyncpg.PostgresConnectionError,  # includes a connection that died under us
    asyncpg.OperatorInterventionError,  # shutting down, starting up
    OSError,
)

_APPEND = (
    "INSERT INTO outbox (room_id, session_id, seq, room_order, partial, payload)"
    " VALUES ($1, $2, $3, $4, $5, $6::jsonb)"
)
# The same row again, when an earlier INSERT of it may have committed (a retry, or a send
# whose INSERT a cancellation cut off).
_IF_ABSENT = " ON CONFLICT (session_id, seq) DO NOTHING"
_APPEND_IF_ABSENT = _APPEND + _IF_ABSENT
# Only while the room's lease ($7) is held: one statement, no extra round trip.
_APPEND_FENCED = (
    "INSERT INTO outbox (room_id, session_id, seq, room_order, partial, payload)"
    " SELECT $1::text, $2::text, $3::integer, $4::bigint, $5::boolean, $6::jsonb"
    " WHERE EXISTS (SELECT 1 FROM room_leases l WHERE l.room_id = $1::text"
    " AND l.token = $7::bigint AND l.expires_at > now())"
)
_APPEND_FENCED_IF_ABSENT = _APPEND_FENCED + _IF_ABSENT


@dataclass(frozen=True)
class OutboxRow:
    session_id: str
    seq: int
    room_order: int
    partial: bool
    payload: str  # the envelope as JSON text


@dataclass(frozen=True)
class AckRow:
    session_id: str
    seq: int
    participant: str
    applied_json: str
    applied_at: float


class Outbox:
    def __init__(self, pool: asyncpg.Pool, *, retry_s: float = 15.0) -> None:
        self.pool = pool
        # How long an append waits out a Postgres restart before the send fails.
        self.retry_s = retry_s

    async def ensure_room(self, room_id: str, apply_mode: str) -> None:
        await self.pool.execute(
            "INSERT INTO rooms (room_id, apply_mode) VALUES ($1, $2)"
            " ON CONFLICT (room_id) DO UPDATE SET apply_mode = EXCLUDED.apply_mode",
            room_id,
            apply_mode,
        )

    async def max_room_order(self, room_id: str) -> int:
        value = await self.pool.fetchval(
            "SELECT coalesce(max(room_order), 0) FROM outbox WHERE room_id = $1", room_id
        )
        return int(value)

    async def max_seq(self, session_id: str) -> int:
        value = await self.pool.fetchval(
            "SELECT coalesce(max(seq), 0) FROM outbox WHERE session_id = $1", session_id
        )
        return int(value)

    async def append(
        self,
        room_id: str,
        session_id: str,
        seq: int,
        room_order: int,
        partial: bool,
        payload: str,
        *,
        if_absent: bool = False,
        fence: int | None = None,
    ) -> None:
        """Persist one envelope; a Postgres restart is waited out for up to `retry_s`.
        `if_absent`: this exact row may already be there (an INSERT of it was cut off).
        `fence`: the room's lease token; the append is refused (`LeaseLost`) unless it holds."""
        if fence is not None:
            await self._append_fenced(
                (room_id, session_id, seq, room_order, partial, payload, fence), if_absent
            )
            return
        args = (room_id, session_id, seq, room_order, partial, payload)
        query = _APPEND_IF_ABSENT if if_absent else _APPEND
        try:  # the common path, without the retry machinery (~30 us a call)
            await self.pool.execute(query, *args)
            return
        except TRANSIENT as err:
            log.warning("outbox_append_retry", session_id=session_id, seq=seq, error=str(err))
        await self._retrying(_APPEND_IF_ABSENT, args)

    async def _retrying(self, query: str, args: tuple[object, ...]) -> str:
        """Run an if-absent append until Postgres is back: only this steward allocates the
        session's seqs, so a row already there is the one a failed attempt committed."""
        retrying = AsyncRetrying(
            retry=retry_if_exception_type(TRANSIENT),
            wait=wait_exponential(multiplier=0.05, max=1.0),
            stop=stop_after_delay(self.retry_s),
            reraise=True,
        )
        status = ""
        async for attempt in retrying:
            with attempt:
                status = await self.pool.execute(query, *args)
        return status

    async def _append_fenced(self, args: tuple[object, ...], if_absent: bool) -> None:
        room_id, session_id, seq, token = args[0], args[1], args[2], args[6]
        query = _APPEND_FENCED_IF_ABSENT if if_absent else _APPEND_FENCED
        try:
            status = await self.pool.execute(query, *args)
        except TRANSIENT as err:
            log.warning("outbox_append_retry", session_id=session_id, seq=seq, error=str(err))
            status = await self._retrying(_APPEND_FENCED_IF_ABSENT, args)
            if_absent = True
        if status.endswith(" 1"):
            return
        if if_absent and await self._present(str(session_id), int(str(seq))):
            return  # the row an earlier attempt wrote
        if await regain(self.pool, str(room_id), int(str(token))):
            await self.pool.execute(_APPEND_FENCED_IF_ABSENT, *args)
            return
        log.warning(
            "outbox_append_fenced", room=room_id, session_id=session_id, seq=seq, token=token
        )
        raise LeaseLost(str(room_id), int(str(token)))

    async def _present(self, session_id: str, seq: int) -> bool:
        found = await self.pool.fetchval(
            "SELECT 1 FROM outbox WHERE session_id = $1 AND seq = $2", session_id, seq
        )
        return found is not None

    async def session_after(self, room_id: str, session_id: str, last_seq: int) -> list[OutboxRow]:
        rows = await self.pool.fetch(
            "SELECT session_id, seq, room_order, partial, payload::text AS payload FROM outbox"
            " WHERE room_id = $1 AND session_id = $2 AND seq > $3 ORDER BY seq",
            room_id,
            session_id,
            last_seq,
        )
        return [OutboxRow(**dict(r)) for r in rows]

    async def room_history(self, room_id: str, *, skip_acked_by: str = "") -> list[OutboxRow]:
        """The room's envelopes in room order, minus those `skip_acked_by` already applied."""
        rows = await self.pool.fetch(
            "SELECT o.session_id, o.seq, o.room_order, o.partial, o.payload::text AS payload"
            " FROM outbox o WHERE o.room_id = $1 AND NOT EXISTS (SELECT 1 FROM acks a"
            " WHERE a.session_id = o.session_id AND a.seq = o.seq AND a.participant = $2)"
            " ORDER BY o.room_order",
            room_id,
            skip_acked_by,
        )
        return [OutboxRow(**dict(r)) for r in rows]

    async def session_room(self, session_id: str) -> str | None:
        value = await self.pool.fetchval(
            "SELECT room_id FROM outbox WHERE session_id = $1 LIMIT 1", session_id
        )
        return None if value is None else str(value)

    async def record_acks(self, acks: list[AckRow]) -> None:
        if not acks:
            return
        await self.pool.executemany(
            "INSERT INTO acks (session_id, seq, participant, applied, applied_at)"
            " VALUES ($1, $2, $3, $4::jsonb, $5) ON CONFLICT DO NOTHING",
            [(a.session_id, a.seq, a.participant, a.applied_json, a.applied_at) for a in acks],
        )

    async def ack_count(self, session_id: str) -> int:
        value = await self.pool.fetchval(
            "SELECT count(*) FROM acks WHERE session_id = $1", session_id
        )
        return int(value)

    async def start_session(
        self,
        *,
        session_id: str,
        room_id: str,
        source: str,
        requester: str | None,
        model: str,
        fairy_id: str | None = None,
    ) -> None:
        await self.pool.execute(
            "INSERT INTO agent_sessions (session_id, room_id, fairy_id, source, requester, model,"
            " status) VALUES ($1, $2, $3, $4, $5, $6, 'running') ON CONFLICT DO NOTHING",
            session_id,
            room_id,
            fairy_id,
            source,
            requester,
            model,
        )

    async def interrupted_sessions(self, room_id: str) -> list[str]:
        """One-shot sessions of the room still marked running: a steward that died left them
        (fairy sessions are not listed: their runtime resumes them)."""
        rows = await self.pool.fetch(
            "SELECT session_id FROM agent_sessions WHERE room_id = $1 AND status = 'running'"
            " AND fairy_id IS NULL ORDER BY created_at",
            room_id,
        )
        return [str(r["session_id"]) for r in rows]

    async def end_session(self, session_id: str, status: str, outcome: str) -> None:
        await self.pool.execute(
            "UPDATE agent_sessions SET status = $2, outcome = $3, ended_at = now()"
            " WHERE session_id = $1",
            session_id,
            status,
            outcome,
        )
