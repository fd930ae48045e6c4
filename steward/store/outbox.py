"""The envelope outbox, acks, rooms and agent sessions (tables from 0001_init.sql).

Every envelope is written here before it is sent, so reconnecting browsers and late joiners
replay from Postgres and a restarted steward continues each room's order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import asyncpg

from steward.obs.logging import get_logger
from steward.obs.stage_hooks import Stage, StageHooks
from steward.store.leases import LeaseLost, regain
from steward.store.reconnect import ReachablePool, when_reachable

log = get_logger(__name__)

# Errors of a Postgres that is restarting or briefly unreachable: the append is retried.
TRANSIENT = (
    asyncpg.PostgresConnectionError,  # includes a connection that died under us
    asyncpg.OperatorInterventionError,  # shutting down, starting up
    OSError,
    # A pooled connection still reading the server's shutdown error, handed out before the
    # pool saw it die: refused before anything is sent ("cannot switch to state 12").
    asyncpg.InternalClientError,
)

# Many rows in one statement (one round trip, one commit): the batch's columns as arrays.
# The fenced form writes them only while the room's lease ($8) is held (checked once).
_ROWS = (
    "INSERT INTO outbox (room_id, session_id, seq, room_order, partial, payload)"
    " SELECT $1::text, u.s, u.q, u.o, u.p, u.j::jsonb"
    " FROM unnest($2::text[], $3::integer[], $4::bigint[], $5::boolean[], $6::text[])"
    " AS u(s, q, o, p, j)"
)
_FENCE = (
    " WHERE $7::bigint IS NULL OR EXISTS (SELECT 1 FROM room_leases l"
    " WHERE l.room_id = $1::text AND l.token = $7::bigint AND l.expires_at > now())"
)
_APPEND = _ROWS + _FENCE
# The same rows again, when an earlier INSERT of them may have committed (a retry after a
# connection died mid-statement): rows already there are skipped.
_APPEND_IF_ABSENT = _APPEND + " ON CONFLICT (session_id, seq) DO NOTHING"
_PRESENT = (
    "SELECT count(*) FROM outbox o JOIN unnest($1::text[], $2::integer[]) AS u(s, q)"
    " ON o.session_id = u.s AND o.seq = u.q"
)


@dataclass(frozen=True)
class OutboxRow:
    """One envelope as the outbox holds it: session, seq, room order, partial or not, its JSON."""

    session_id: str
    seq: int
    room_order: int
    partial: bool
    payload: str  # the envelope as JSON text


@dataclass(frozen=True)
class AckRow:
    """One participant's ack of an envelope, with what it applied and when."""

    session_id: str
    seq: int
    participant: str
    applied_json: str
    applied_at: float


@dataclass(frozen=True)
class SessionRecord:
    """A session's row in `agent_sessions`: where, for whom, and whether it still runs."""

    session_id: str
    room_id: str
    requester: str | None
    fairy_id: str | None
    source: str
    status: str


class Outbox:
    """The envelope outbox in Postgres: appends under the lease fence, replays, acks, rooms and
    session records."""

    def __init__(self, pool: asyncpg.Pool, *, retry_s: float = 15.0) -> None:
        self.pool = pool
        # Everything but the appends (which retry on their own, idempotently) waits out a
        # Postgres that refuses connections: a run's reads (its last seq) no longer fail it.
        self._db = ReachablePool(pool)
        # How long an append waits out a Postgres restart before the send fails.
        self.retry_s = retry_s
        self.hooks = StageHooks()
        # Told (room id, token) when the fence refuses an append: the lease keeper gives the
        # room up at once instead of at its next renewal.
        self.on_fenced: Callable[[str, int], None] | None = None

    async def ensure_room(self, room_id: str, apply_mode: str) -> None:
        await self._db.execute(
            "INSERT INTO rooms (room_id, apply_mode) VALUES ($1, $2)"
            " ON CONFLICT (room_id) DO UPDATE SET apply_mode = EXCLUDED.apply_mode",
            room_id,
            apply_mode,
        )

    async def max_room_order(self, room_id: str) -> int:
        value = await self._db.fetchval(
            "SELECT coalesce(max(room_order), 0) FROM outbox WHERE room_id = $1", room_id
        )
        return int(value)

    async def max_seq(self, session_id: str) -> int:
        value = await self._db.fetchval(
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
        """Persist one envelope (`append_many` of one row)."""
        row = OutboxRow(session_id, seq, room_order, partial, payload)
        await self.append_many(room_id, [row], if_absent=if_absent, fence=fence)

    async def append_many(
        self,
        room_id: str,
        rows: Sequence[OutboxRow],
        *,
        if_absent: bool = False,
        fence: int | None = None,
    ) -> None:
        """Persist envelopes in one statement; a Postgres restart is waited out for up to
        `retry_s`. `if_absent`: these exact rows may already be there. `fence`: the room's
        lease token; nothing is written (`LeaseLost`) unless it holds."""
        work = self._append_many(room_id, rows, if_absent=if_absent, fence=fence)
        await self.hooks.timed(Stage.OUTBOX_APPEND, work, rows=rows)

    async def _append_many(
        self, room_id: str, rows: Sequence[OutboxRow], *, if_absent: bool, fence: int | None
    ) -> None:
        if not rows:
            return
        args = (
            room_id,
            [r.session_id for r in rows],
            [r.seq for r in rows],
            [r.room_order for r in rows],
            [r.partial for r in rows],
            [r.payload for r in rows],
            fence,
        )
        try:  # the common path, without the retry machinery (~30 us a call)
            status = await self.pool.execute(_APPEND_IF_ABSENT if if_absent else _APPEND, *args)
        except TRANSIENT as err:
            log.warning("outbox_append_retry", rows=len(rows), seq=rows[0].seq, error=str(err))
            status = await self._retrying(_APPEND_IF_ABSENT, args)
            if_absent = True
        if status == f"INSERT 0 {len(rows)}":
            return
        if if_absent and await self._present(rows) == len(rows):
            return  # the rows an earlier attempt wrote
        if fence is None:
            raise RuntimeError(f"outbox append of {len(rows)} rows: {status}")
        if await regain(self.pool, room_id, fence):
            await self.pool.execute(_APPEND_IF_ABSENT, *args)
            return
        log.warning(
            "outbox_append_fenced",
            room=room_id,
            rows=len(rows),
            session_id=rows[0].session_id,
            seq=rows[0].seq,
            token=fence,
        )
        if self.on_fenced is not None:
            self.on_fenced(room_id, fence)
        raise LeaseLost(room_id, fence)

    async def _retrying(self, query: str, args: tuple[object, ...]) -> str:
        """Run an if-absent append until Postgres is back: only this steward allocates the
        session's seqs, so a row already there is the one a failed attempt committed."""
        return await when_reachable(
            lambda: self.pool.execute(query, *args),
            "outbox_append",
            within=self.retry_s,
            retry_on=TRANSIENT,
        )

    async def _present(self, rows: Sequence[OutboxRow]) -> int:
        found = await self._db.fetchval(
            _PRESENT, [r.session_id for r in rows], [r.seq for r in rows]
        )
        return int(found)

    async def session_after(self, room_id: str, session_id: str, last_seq: int) -> list[OutboxRow]:
        rows = await self._db.fetch(
            "SELECT session_id, seq, room_order, partial, payload::text AS payload FROM outbox"
            " WHERE room_id = $1 AND session_id = $2 AND seq > $3 ORDER BY seq",
            room_id,
            session_id,
            last_seq,
        )
        return [OutboxRow(**dict(r)) for r in rows]

    async def room_history(
        self, room_id: str, *, skip_acked_by: str = "", skip_acked_by_anyone: bool = False
    ) -> list[OutboxRow]:
        """The room's envelopes in room order, minus those `skip_acked_by` already applied
        (or, `skip_acked_by_anyone`, that anyone applied: host mode's shared document)."""
        rows = await self._db.fetch(
            "SELECT o.session_id, o.seq, o.room_order, o.partial, o.payload::text AS payload"
            " FROM outbox o WHERE o.room_id = $1 AND NOT EXISTS (SELECT 1 FROM acks a"
            " WHERE a.session_id = o.session_id AND a.seq = o.seq"
            " AND (a.participant = $2 OR $3)) ORDER BY o.room_order",
            room_id,
            skip_acked_by,
            skip_acked_by_anyone,
        )
        return [OutboxRow(**dict(r)) for r in rows]

    async def session_room(self, session_id: str) -> str | None:
        value = await self._db.fetchval(
            "SELECT room_id FROM outbox WHERE session_id = $1 LIMIT 1", session_id
        )
        return None if value is None else str(value)

    async def record_acks(self, acks: list[AckRow]) -> None:
        if not acks:
            return
        # One statement for the whole flush (executemany costs a Bind/Execute per row).
        await self._db.execute(
            "INSERT INTO acks (session_id, seq, participant, applied, applied_at)"
            " SELECT u.s, u.q, u.p, u.a::jsonb, u.t FROM unnest($1::text[], $2::integer[],"
            " $3::text[], $4::text[], $5::float8[]) AS u(s, q, p, a, t) ON CONFLICT DO NOTHING",
            [a.session_id for a in acks],
            [a.seq for a in acks],
            [a.participant for a in acks],
            [a.applied_json for a in acks],
            [a.applied_at for a in acks],
        )

    async def ack_count(self, session_id: str) -> int:
        value = await self._db.fetchval(
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
        await self._db.execute(
            "INSERT INTO agent_sessions (session_id, room_id, fairy_id, source, requester, model,"
            " status) VALUES ($1, $2, $3, $4, $5, $6, 'running') ON CONFLICT DO NOTHING",
            session_id,
            room_id,
            fairy_id,
            source,
            requester,
            model,
        )

    async def session_record(self, session_id: str) -> SessionRecord | None:
        row = await self._db.fetchrow(
            "SELECT session_id, room_id, requester, fairy_id, source, status"
            " FROM agent_sessions WHERE session_id = $1",
            session_id,
        )
        return None if row is None else SessionRecord(**dict(row))

    async def interrupted_sessions(self, room_id: str) -> list[str]:
        """One-shot sessions of the room still marked running: a steward that died left them
        (fairy sessions are not listed: their runtime resumes them)."""
        rows = await self._db.fetch(
            "SELECT session_id FROM agent_sessions WHERE room_id = $1 AND status = 'running'"
            " AND fairy_id IS NULL ORDER BY created_at",
            room_id,
        )
        return [str(r["session_id"]) for r in rows]

    async def end_session(self, session_id: str, status: str, outcome: str) -> None:
        await self._db.execute(
            "UPDATE agent_sessions SET status = $2, outcome = $3, ended_at = now()"
            " WHERE session_id = $1",
            session_id,
            status,
            outcome,
        )
