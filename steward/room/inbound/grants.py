"""Who may prompt and moderate: signed grants (steward.access), each bound to one session.

A browser may set its own attributes, so a grant value alone proves only that it was minted
for this room and identity and has not expired. The first participant session (SID) that
presents it owns it; the same value presented by another session (an old grant set again on
a connection whose token carries none) is refused and logged. Bindings live in Postgres, so
a restarted steward keeps them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from steward.access import Grant, verify_grant
from steward.obs import metrics
from steward.obs.logging import get_logger
from steward.room.participants import Member
from steward.store.grants import GrantBindings
from steward.task_set import TaskSet

log = get_logger(__name__)


class GrantBook:
    """Checks prompt grants and binds each to the participant session that first used it."""

    def __init__(
        self,
        room_id: str,
        keys: Sequence[str],
        store: GrantBindings | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.room_id = room_id
        self._keys = list(keys)
        self._store = store
        self._clock = clock
        self._bound: dict[str, str] = {}
        self._refused: set[tuple[str, str]] = set()
        self._tasks = TaskSet("grant_bind_crashed", room=room_id)

    async def load(self) -> None:
        if self._store is not None:
            self._bound.update(await self._store.load(self.room_id))

    def check(self, member: Member) -> Grant | None:
        """The member's valid grant, bound to its session, or None."""
        grant = verify_grant(
            self._keys,
            room=self.room_id,
            identity=member.identity,
            value=member.prompt_grant,
            now=self._clock() if self._clock is not None else None,
        )
        if grant is None:
            return None
        owner = self._bound.get(grant.nonce)
        if owner is None:
            self._bound[grant.nonce] = member.sid
            self._persist(member, grant)
            return grant
        if owner != member.sid:
            if (grant.nonce, member.sid) not in self._refused:
                self._refused.add((grant.nonce, member.sid))
                metrics.REJECTED_INBOUND.labels(topic="grant", reason="grant_rebound").inc()
                log.warning(
                    "grant_rebound_refused",
                    room=self.room_id,
                    participant=member.identity,
                    sid=member.sid,
                    bound_sid=owner,
                )
            return None
        return grant

    def _persist(self, member: Member, grant: Grant) -> None:
        if self._store is None:
            return
        store = self._store

        async def bind() -> None:
            try:
                owner = await store.bind(
                    self.room_id,
                    grant.nonce,
                    identity=member.identity,
                    sid=member.sid,
                    expires_at=grant.expires_at,
                )
            except Exception as err:  # kept in memory; the next start binds it again
                log.warning("grant_bind_failed", room=self.room_id, error=str(err))
                return
            self._bound[grant.nonce] = owner  # another steward may have bound it first

        self._tasks.spawn(bind())

    async def flush(self) -> None:
        """Wait for bindings being written (tests, shutdown)."""
        await self._tasks.wait()
