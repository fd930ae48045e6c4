"""Composing hints: a user is typing (`steward:composing`) or speaking (an `lk.transcription`
stream starts) a prompt, so the steward fetches that participant's context now (its own
browser's, else the host's render of its view) instead of after the prompt arrives.

Only participants allowed to prompt trigger a prefetch (the Intake's grant check); a refused
hint is a logged rejection. At most one prefetch starts per room per `min_interval_s`; more
hints are dropped, counted, not errors. What the fetcher does with a hint (start, already
cached, already in flight, no capable host) is counted too.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal

from steward.obs import metrics
from steward.obs.logging import get_logger
from steward.protocol.box import Box
from steward.protocol.messages import ComposingHint
from steward.protocol.names import TOPIC_COMPOSING
from steward.room.context.snapshot_fetcher import SnapshotFetcher
from steward.room.participants import Member, Participants

log = get_logger(__name__)

HintSource = Literal["browser", "voice"]
Outcome = Literal["started", "cached", "in_flight", "no_host", "dropped", "refused"]


class ComposingHints:
    """Turns a `steward:composing` hint or a starting transcription into an early context fetch for
    that participant."""

    def __init__(
        self,
        room_id: str,
        participants: Participants,
        fetcher: SnapshotFetcher,
        may_prompt: Callable[[Member], bool],
        on_reject: Callable[[str, str, str, str], None],
        *,
        min_interval_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.room_id = room_id
        self._participants = participants
        self._fetcher = fetcher
        self._may_prompt = may_prompt
        self._on_reject = on_reject
        self.min_interval_s = min_interval_s
        self._clock = clock
        self._last_start: float | None = None
        self.counts: dict[str, int] = {}

    def on_hint(self, sender: str, hint: ComposingHint) -> None:
        """`steward:composing` from a browser (already decoded and size-checked)."""
        self.hint(sender, hint)

    def hint(self, sender: str, hint: ComposingHint) -> Outcome:
        if not self._allowed(sender):
            self._on_reject(TOPIC_COMPOSING, sender, "not_allowed", "may not prompt in this room")
            return self._count("browser", "refused")
        return self._prefetch(sender, hint.bounds, "browser")

    def on_voice(self, sender: str) -> Outcome:
        """A transcription stream started: a spoken prompt has no bounds. Voice agents that
        may not prompt are skipped quietly (their final segment is refused by the Intake)."""
        if not self._allowed(sender):
            return self._count("voice", "refused")
        return self._prefetch(sender, None, "voice")

    def _allowed(self, sender: str) -> bool:
        member = self._participants.get(sender)
        return member is not None and self._may_prompt(member)

    def _prefetch(self, sender: str, bounds: Box | None, source: HintSource) -> Outcome:
        now = self._clock()
        if self._last_start is not None and now - self._last_start < self.min_interval_s:
            return self._count(source, "dropped")
        outcome = self._fetcher.prefetch(bounds, asker=sender)
        if outcome == "started":
            self._last_start = now
            log.info(
                "context_prefetch_started",
                room=self.room_id,
                participant=sender,
                source=source,
                bounds=bounds is not None,
            )
        return self._count(source, outcome)

    def _count(self, source: HintSource, outcome: Outcome) -> Outcome:
        metrics.COMPOSING_HINTS.labels(source=source, outcome=outcome).inc()
        self.counts[outcome] = self.counts.get(outcome, 0) + 1
        return outcome
