"""What one participant may send the steward in a window, whatever it is: data packets on any
topic (the app's own `app:*` ones included) and streams the steward refuses, reads or has no
handler for, counted whether read or not.

Everything the SFU relays to the steward shares its one reliable data channel, so a sender
that pushes megabytes the steward never asked for delays every other participant's RPCs and
context streams behind them. Two limits apply: the budget over `WINDOW_S` (bytes and
packets), and a burst allowance of bytes over the last `BURST_S`. An honest browser's
unsolicited traffic comes in bursts well under the allowance (a paste of hundreds of shapes
is a few hundred KiB at once) and averages far under the budget; a flood passes the
allowance within a fraction of a second of arriving, since the channel delivers it at about
a megabyte a second. Everything that arrives while a participant is over either limit is a
strike weighing one per `BYTES_PER_STRIKE` over the budget, one per `BURST_BYTES_PER_STRIKE`
over the allowance (at least one), so a flood of bytes is muted (`AbuseGuard`) within a few
packets past the allowance and a flood of small packets within the guard's limit of them.
Streams the steward asked for (context answers, bounded by their own caps) count one packet
and no bytes.

What the steward never reads (packets on topics it does not handle, streams on topics with
no handler, the part of an answer past its cap) has a third, much smaller allowance over
the same `BURST_S` (`unread_burst_bytes`), a strike per `UNREAD_BYTES_PER_STRIKE` past it:
nothing the app sends the steward goes unread, so unread bytes are another app's chatter at
best, and a flood spread over many senders, topics or streams reaches each sender's share
of the data channel (a fraction of a megabyte a second) well under the general allowance.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

BYTES_PER_STRIKE = 4096
BURST_BYTES_PER_STRIKE = 1024
WINDOW_S = 10.0
BURST_S = 1.0
UNREAD_BYTES_PER_STRIKE = 128

# (identity, reason, weight): a strike for data over the budget.
Strike = Callable[[str, str, int], None]


class _Window:
    """Arrivals as (time, bytes) over the last `span` seconds, and their sum."""

    def __init__(self, span: float) -> None:
        self.span = span
        self.arrivals: deque[tuple[float, int]] = deque()
        self.bytes = 0

    def add(self, now: float, nbytes: int) -> None:
        while self.arrivals and now - self.arrivals[0][0] > self.span:
            self.bytes -= self.arrivals.popleft()[1]
        self.arrivals.append((now, nbytes))
        self.bytes += nbytes


class InboundBudget:
    """The bytes and packets each participant may send in a window; going over is a strike."""

    def __init__(
        self,
        strike: Strike,
        *,
        bytes_per_window: int,
        packets_per_window: int,
        burst_bytes: int | None = None,
        unread_burst_bytes: int | None = None,
        window_s: float = WINDOW_S,
        burst_s: float = BURST_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._strike = strike
        self.bytes_per_window = bytes_per_window
        self.packets_per_window = packets_per_window
        self.burst_bytes = burst_bytes  # None: no burst allowance, the budget alone
        self.unread_burst_bytes = unread_burst_bytes  # None: unread bytes count like the rest
        self.window_s = window_s
        self.burst_s = burst_s
        self._clock = clock
        # identity -> its arrivals over the window, over the burst span, and its unread
        # arrivals over the burst span
        self._seen: dict[str, tuple[_Window, _Window, _Window]] = {}
        self.over_events = 0

    def charge(self, identity: str, nbytes: int, *, unread: bool = False) -> bool:
        """Count one arrival of `nbytes` from `identity` (`unread`: the steward does not read
        it); False (and a strike) when it is over the budget or an allowance."""
        now = self._clock()
        seen = self._seen.get(identity)
        if seen is None:
            spans = (self.window_s, self.burst_s, self.burst_s)
            seen = self._seen[identity] = (_Window(spans[0]), _Window(spans[1]), _Window(spans[2]))
        window, burst, unread_burst = seen
        window.add(now, nbytes)
        burst.add(now, nbytes)
        weight = 0
        if window.bytes > self.bytes_per_window or len(window.arrivals) > self.packets_per_window:
            weight = 1 + nbytes // BYTES_PER_STRIKE
        if self.burst_bytes is not None and burst.bytes > self.burst_bytes:
            weight = max(weight, 1 + nbytes // BURST_BYTES_PER_STRIKE)
        reason = "over_budget_data"
        if unread and self.unread_burst_bytes is not None:
            unread_burst.add(now, nbytes)
            if unread_burst.bytes > self.unread_burst_bytes:
                weight = max(weight, 1 + nbytes // UNREAD_BYTES_PER_STRIKE)
                reason = "over_budget_unread"
        if not weight:
            return True
        self.over_events += 1
        self._strike(identity, reason, weight)
        return False

    def usage(self, identity: str) -> tuple[int, int]:
        """(bytes, packets) counted for `identity` in the current window."""
        seen = self._seen.get(identity)
        return (seen[0].bytes, len(seen[0].arrivals)) if seen is not None else (0, 0)

    def forget(self, identity: str) -> None:
        self._seen.pop(identity, None)

    def __contains__(self, identity: str) -> bool:
        return identity in self._seen
