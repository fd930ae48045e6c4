"""The client's gap buffer: envelopes of each session are released strictly in seq order.

A seq at or below the last released one is a duplicate (re-ack it, never re-apply); a seq
beyond the next expected one is held until the gap is filled by a retransmit or a resync.
A session's final status names its last seq: missing trailing envelopes are a gap as well.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from steward.protocol.messages import ActionEnvelope


@dataclass
class _SessionOrder:
    last: int = 0
    held: dict[int, ActionEnvelope] = field(default_factory=dict)
    gap_since: float | None = None
    expected: int = 0  # the last seq the session's final status announced

    def open(self) -> bool:
        return bool(self.held) or self.last < self.expected


@dataclass
class Offer:
    """What offering an envelope to the gap buffer gave: the envelopes now ready, or that it was a
    duplicate or held."""

    ready: list[ActionEnvelope]
    duplicate: bool = False
    held: bool = False


class GapBuffer:
    """Releases each session's envelopes strictly in seq order, holding those that arrive early."""

    def __init__(self, max_held: int = 10_000) -> None:
        self._sessions: dict[str, _SessionOrder] = {}
        self.max_held = max_held

    def offer(self, env: ActionEnvelope, now: float | None = None) -> Offer:
        order = self._sessions.setdefault(env.session_id, _SessionOrder())
        if env.seq <= order.last or env.seq in order.held:
            return Offer(ready=[], duplicate=True)
        if env.seq != order.last + 1:
            if len(order.held) < self.max_held:
                order.held[env.seq] = env
                if order.gap_since is None:
                    order.gap_since = time.monotonic() if now is None else now
            return Offer(ready=[], held=True)
        ready = [env]
        order.last = env.seq
        while order.last + 1 in order.held:
            order.last += 1
            ready.append(order.held.pop(order.last))
        order.gap_since = (time.monotonic() if now is None else now) if order.open() else None
        return Offer(ready=ready)

    def expect(self, session_id: str, last_seq: int, now: float | None = None) -> None:
        """The session ended at `last_seq`: anything short of it is a gap to ask for."""
        order = self._sessions.setdefault(session_id, _SessionOrder())
        order.expected = max(order.expected, last_seq)
        if order.open() and order.gap_since is None:
            order.gap_since = time.monotonic() if now is None else now

    def last_seq(self, session_id: str) -> int:
        order = self._sessions.get(session_id)
        return 0 if order is None else order.last

    def expected_seq(self, session_id: str) -> int:
        """The last seq the session's final status announced (0: none yet)."""
        order = self._sessions.get(session_id)
        return 0 if order is None else order.expected

    def sessions(self) -> dict[str, int]:
        return {sid: o.last for sid, o in self._sessions.items()}

    def stalled(self, older_than_s: float, now: float | None = None) -> dict[str, int]:
        """Sessions whose gap has been open longer than `older_than_s`: session -> last seq."""
        t = time.monotonic() if now is None else now
        return {
            sid: o.last
            for sid, o in self._sessions.items()
            if o.gap_since is not None and t - o.gap_since > older_than_s
        }

    def held_seqs(self) -> dict[str, list[int]]:
        """Session → the seqs held behind a gap (sessions without one are left out)."""
        return {sid: sorted(o.held) for sid, o in self._sessions.items() if o.held}

    def held_count(self) -> int:
        return sum(len(o.held) for o in self._sessions.values())
