"""Which previews are worth sending.

A partial envelope (a preview, superseded by the action's next version) is held while the
action's previous preview is still unacked by some participant (under load a room sends fewer
previews, clocked by its clients' acks), and within `interval_s` of it (an action's shape
updates at most that often while it streams; its first preview is never held). Finals are
always sent, so every canvas ends the same.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Literal

from steward.protocol.messages import WireAction

# An action's previews at most this often (its first at once; its final always).
PREVIEW_INTERVAL_S = 0.2

HeldFor = Literal["paced", "unacked"]


class PreviewPacer:
    """Decides which preview envelopes are sent, from each action's last preview and its acks."""

    def __init__(self, interval_s: float, clock: Callable[[], float]) -> None:
        self.interval_s = interval_s
        self._clock = clock
        # (session_id, action id) → (seq, clock) of its last preview; dropped at its final.
        self._last: dict[tuple[str, str], tuple[int, float]] = {}

    def numbered(
        self, session_id: str, actions: Iterable[WireAction], seq: int, *, partial: bool
    ) -> None:
        """`actions` went into envelope `seq`: a preview starts their clocks, a final ends them."""
        now = self._clock()
        for action in actions:
            if partial:
                self._last[(session_id, action.id)] = (seq, now)
            else:
                self._last.pop((session_id, action.id), None)

    def held(
        self,
        session_id: str,
        actions: Iterable[WireAction],
        delivered: Callable[[int], bool],
    ) -> HeldFor | None:
        """Why a partial send is not sent, or None: every action of it has a previous preview
        numbered within `interval_s` ("paced"), or one not yet `delivered` (queued, unacked by
        some participant or not yet sent by LiveKit: "unacked"); its successor (or the final)
        carries everything it has."""
        now = self._clock()
        reason: HeldFor = "paced"
        for action in actions:
            prev = self._last.get((session_id, action.id))
            if prev is None:
                return None
            seq, at = prev
            if now - at < self.interval_s:
                continue
            if delivered(seq):
                return None
            reason = "unacked"
        return reason

    def unsent(self, first_seq: Mapping[str, int]) -> None:
        """Envelopes from `first_seq` on (per session) were never persisted: forget previews
        numbered among them."""
        for key, (seq, _) in list(self._last.items()):
            if key[0] in first_seq and seq >= first_seq[key[0]]:
                del self._last[key]
