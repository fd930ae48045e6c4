"""Room leases (migration 0013): which steward serves a room, with a fencing token.

A steward holds a room's lease while it serves the room and renews it every third of the
lease time. A lease not renewed in time, or whose owner process is gone (its liveness lock
dropped: steward/store/liveness.py), may be taken by another steward, which bumps the token;
the outbox refuses appends that carry an old or expired token (`Outbox.append`'s `fence`), so a
steward that was frozen and comes back publishes nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

import asyncpg

from steward.obs.logging import get_logger
from steward.store.liveness import Liveness, owner_gone

log = get_logger(__name__)

# Take the room if it is free, expired, its owner is gone, or already ours; a new holder gets
# a new token.
_ACQUIRE = f"""
INSERT INTO room_leases (room_id, owner, token, expires_at, owner_key)
VALUES ($1, $2, 1, now() + make_interval(secs => $3), $4)
ON CONFLICT (room_id) DO UPDATE SET
    owner = EXCLUDED.owner, token = room_leases.token + 1, acquired_at = now(),
    heartbeat_at = now(), expires_at = EXCLUDED.expires_at, redispatch_after = NULL,
    owner_key = EXCLUDED.owner_key
WHERE room_leases.expires_at <= now() OR room_leases.owner = EXCLUDED.owner
   OR {owner_gone("room_leases")}
RETURNING token, expires_at
"""
# Renewal needs the same token only: a lease that lapsed but that nobody took is still ours.
# Every lease a process holds is renewed in one statement (one round trip per beat, not one
# per room); it returns the rooms still held.
_RENEW_MANY = """
UPDATE room_leases SET heartbeat_at = now(), expires_at = now() + make_interval(secs => $3)
FROM unnest($1::text[], $2::bigint[]) AS u(room_id, token)
WHERE room_leases.room_id = u.room_id AND room_leases.token = u.token
RETURNING room_leases.room_id
"""
# Released: expired at its last heartbeat, which tells it apart from a lease that lapsed.
# The same, from the outbox, keeping the lease's own length (it does not know the setting).
_REGAIN = """
UPDATE room_leases SET heartbeat_at = now(), expires_at = now() + (expires_at - heartbeat_at)
WHERE room_id = $1 AND token = $2 AND expires_at > heartbeat_at
RETURNING token
"""
# Lapsed or released recently, or its owner gone, and no worker has claimed this lapse for
# re-dispatch yet. One query; pg_locks is read once (a hashed subplan) and only for live rows.
_UNATTENDED = f"""
SELECT room_id FROM room_leases
WHERE (expires_at <= now() AND expires_at > now() - make_interval(secs => $1)
       OR expires_at > now() AND {owner_gone("room_leases")})
  AND (redispatch_after IS NULL OR redispatch_after <= now())
ORDER BY expires_at
"""
# One worker wins a lapse: the others see it moved forward and skip it. A lease whose owner
# is gone expires here, so from now on it reads as any lapse (`vacate`, `expired`).
_CLAIM_LAPSE = f"""
UPDATE room_leases SET redispatch_after = now() + make_interval(secs => $2),
    expires_at = least(expires_at, now())
WHERE room_id = $1 AND (expires_at <= now() OR {owner_gone("room_leases")})
  AND (redispatch_after IS NULL OR redispatch_after <= now())
RETURNING token
"""
# Released where it lapsed: the horizon still counts from the lapse.
_VACATE = (
    "UPDATE room_leases SET heartbeat_at = expires_at"
    " WHERE room_id = $1 AND token = $2 AND expires_at <= now()"
)
_RELEASE = (
    "UPDATE room_leases SET expires_at = now(), heartbeat_at = now()"
    " WHERE room_id = $1 AND token = $2"
)


def worker_id() -> str:
    """This process's lease owner name: host, pid and a nonce (pids repeat across restarts)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class LeaseHeld(Exception):
    """The room is served by another steward whose lease has not expired."""

    def __init__(self, room_id: str, owner: str, expires_at: datetime) -> None:
        super().__init__(f"room {room_id!r} is served by {owner} (lease until {expires_at})")
        self.room_id = room_id
        self.owner = owner


class LeaseLost(Exception):
    """An append carried a token that no longer holds the room: the room was given up."""

    def __init__(self, room_id: str, token: int) -> None:
        super().__init__(f"lease of room {room_id!r} lost (token {token})")
        self.room_id = room_id
        self.token = token


@dataclass(frozen=True)
class Lease:
    """A room lease held: the room, its owner and the fencing token of this tenure."""

    room_id: str
    owner: str
    token: int


@dataclass(frozen=True)
class LeaseRow:
    """A room lease as Postgres holds it, with when it expires and whether it has."""

    room_id: str
    owner: str
    token: int
    expires_at: datetime
    expired: bool


async def regain(pool: asyncpg.Pool, room_id: str, token: int) -> bool:
    """Renew a lease that lapsed (Postgres was away, the loop was slow) if nobody took it."""
    return await pool.fetchval(_REGAIN, room_id, token) is not None


class RoomLeases:
    """`owner_key`: the owner process's liveness key (steward/store/liveness.py), stored
    with each lease it takes; None: its leases lapse by expiry only."""

    def __init__(
        self, pool: asyncpg.Pool, owner: str, *, ttl_s: float, owner_key: int | None = None
    ) -> None:
        self.pool = pool
        self.owner = owner
        self.ttl_s = ttl_s
        self.owner_key = owner_key

    async def acquire(self, room_id: str) -> Lease:
        """Take the room's lease or raise `LeaseHeld`."""
        row = await self.pool.fetchrow(_ACQUIRE, room_id, self.owner, self.ttl_s, self.owner_key)
        if row is None:
            held = await self.get(room_id)
            owner, until = (held.owner, held.expires_at) if held else ("?", datetime.min)
            log.info("lease_refused", room=room_id, holder=owner)
            raise LeaseHeld(room_id, owner, until)
        log.info("lease_acquired", room=room_id, owner=self.owner, token=row["token"])
        return Lease(room_id, self.owner, int(row["token"]))

    async def renew(self, lease: Lease) -> bool:
        return lease.room_id in await self.renew_many([lease])

    async def renew_many(self, leases: list[Lease]) -> set[str]:
        """Renew them all at once; returns the rooms whose lease was still ours."""
        if not leases:
            return set()
        rows = await self.pool.fetch(
            _RENEW_MANY,
            [lease.room_id for lease in leases],
            [lease.token for lease in leases],
            self.ttl_s,
        )
        return {str(r["room_id"]) for r in rows}

    async def release(self, lease: Lease) -> None:
        """Expire it now, so another steward may take the room at once."""
        await self.pool.execute(_RELEASE, lease.room_id, lease.token)
        log.info("lease_released", room=lease.room_id, token=lease.token)

    async def get(self, room_id: str) -> LeaseRow | None:
        row = await self.pool.fetchrow(
            "SELECT room_id, owner, token, expires_at, expires_at <= now() AS expired"
            " FROM room_leases WHERE room_id = $1",
            room_id,
        )
        return None if row is None else LeaseRow(**dict(row))

    async def expired(self) -> list[str]:
        """Rooms whose lease lapsed without a release (their steward died or froze)."""
        rows = await self.pool.fetch(
            "SELECT room_id FROM room_leases WHERE expires_at <= now()"
            " AND expires_at > heartbeat_at ORDER BY expires_at"
        )
        return [str(r["room_id"]) for r in rows]

    async def unattended(self, horizon_s: float) -> list[str]:
        """Rooms without a live lease (lapsed or released within `horizon_s`, or whose owner
        process is gone) that no worker has claimed for re-dispatch (`claim_lapse`) or whose
        claim ran out."""
        rows = await self.pool.fetch(_UNATTENDED, horizon_s)
        return [str(r["room_id"]) for r in rows]

    async def claim_lapse(self, room_id: str, *, retry_s: float) -> int | None:
        """The lease's token if this worker won the room's lapse (no other worker looks at it
        for `retry_s`), None if another did or the room was taken meanwhile."""
        token = await self.pool.fetchval(_CLAIM_LAPSE, room_id, retry_s)
        return None if token is None else int(token)

    async def vacate(self, room_id: str, token: int) -> None:
        """A lapsed lease of a room nobody is in: released, as its steward would have."""
        await self.pool.execute(_VACATE, room_id, token)


class LeaseKeeper:
    """Renews every lease this process holds; a lease it cannot renew is given up.

    It also answers, cheaply, whether a room may still hear from this process (`confirm`):
    another steward can take a lease only after it expired in Postgres, which is at least a
    lease time after the renewal request that last succeeded was sent, or once the owner's
    liveness lock is gone; until then a local check suffices. Past it (a frozen process, a
    stalled loop, a lock that dropped) one renewal decides."""

    def __init__(
        self,
        leases: RoomLeases,
        on_lost: Callable[[str], None],
        *,
        liveness: Liveness | None = None,
    ) -> None:
        self.leases = leases
        self.held: dict[str, Lease] = {}
        self._on_lost = on_lost
        self._task: asyncio.Task[None] | None = None
        self._liveness = liveness
        # Per room: the monotonic time until which no other steward can hold its lease, and
        # the liveness epoch it assumes unbroken.
        self._sure_until: dict[str, tuple[float, int]] = {}

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name="lease-keeper")

    async def claim(self, room_id: str) -> Lease:
        lease = self.held.get(room_id)
        if lease is None:
            sure = self._sure_from_now()
            lease = await self.leases.acquire(room_id)
            self.held[room_id] = lease
            self._sure_until[room_id] = sure
        return lease

    async def release(self, room_id: str) -> None:
        lease = self.held.pop(room_id, None)
        self._sure_until.pop(room_id, None)
        if lease is not None:
            try:
                await self.leases.release(lease)
            except Exception as err:  # it expires by itself
                log.warning("lease_release_failed", room=room_id, error=str(err))

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        for room_id in list(self.held):
            await self.release(room_id)

    async def confirm(self, room_id: str) -> bool:
        """Whether this process still holds the room's lease (the gate of every publish)."""
        lease = self.held.get(room_id)
        if lease is None:
            return False
        until, epoch = self._sure_until.get(room_id, (0.0, -1))
        if time.monotonic() < until and (
            self._liveness is None or self._liveness.unbroken_since(epoch)
        ):
            return True
        return await self._renew(room_id, lease)

    def refused(self, room_id: str, token: int) -> None:
        """The outbox fence refused an append with `token`: that lease is gone."""
        lease = self.held.get(room_id)
        if lease is not None and lease.token == token:
            self._lose(room_id, lease)

    async def renew_all(self) -> None:
        held = list(self.held.items())
        sure = self._sure_from_now()
        try:  # one statement for every room (a round trip per room cost each idle room)
            kept = await self.leases.renew_many([lease for _, lease in held])
        except Exception as err:  # Postgres away: retried next beat; the fence guards
            log.warning("lease_renew_failed", rooms=len(held), error=str(err))
            return
        for room_id, lease in held:
            self._renewed(room_id, lease, room_id in kept, sure)

    async def _renew(self, room_id: str, lease: Lease) -> bool:
        sure = self._sure_from_now()
        try:
            kept = await self.leases.renew(lease)
        except Exception as err:  # Postgres away: retried next beat; the fence guards
            log.warning("lease_renew_failed", room=room_id, error=str(err))
            return False
        return self._renewed(room_id, lease, kept, sure)

    def _renewed(self, room_id: str, lease: Lease, kept: bool, sure: tuple[float, int]) -> bool:
        """Take a renewal's answer (`sure`: read as it was requested); True if the lease is
        still ours."""
        if self.held.get(room_id) is not lease:
            return False
        if not kept:
            self._lose(room_id, lease)
            return False
        self._sure_until[room_id] = sure
        return True

    def _sure_from_now(self) -> tuple[float, int]:
        """Read before a request: if it succeeds, the room is ours for a lease time from
        now, as long as the liveness lock stays unbroken."""
        epoch = 0 if self._liveness is None else self._liveness.epoch
        return time.monotonic() + self.leases.ttl_s, epoch

    def _lose(self, room_id: str, lease: Lease) -> None:
        del self.held[room_id]
        self._sure_until.pop(room_id, None)
        log.warning("lease_lost", room=room_id, token=lease.token)
        self._on_lost(room_id)

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.leases.ttl_s / 3)
            await self.renew_all()
