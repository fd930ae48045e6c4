"""What one participant may send the steward in a window, whatever it is: data packets on any
topic (the app's own `app:*` ones included) and streams the steward refuses, reads or has no
handler for, counted whether read or not.

Everything the SFU relays to the steward shares its one reliable data channel, so a sender
that pushes megabytes the steward never asked for delays every other participant's RPCs and
context streams behind them. Within the budget nothing happens; everything that arrives while
a participant is over it is a strike weighing one per `BYTES_PER_STRIKE` (at least one), so a
flood of bytes is muted (`AbuseGuard`) within a few packets past the budget and a flood of
small packets within the guard's limit of them. Streams the steward asked for (context
answers, bounded by their own caps) count one packet and no bytes.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

BYTES_PER_STRIKE = 4096
WINDOW_S = 10.0

# (identity, reason, weight): a strike for data over the budget.
Strike = Callable[[str, str, int], None]


class InboundBudget:
    def __init__(
        self,
        strike: Strike,
        *,
        bytes_per_window: int,
        packets_per_window: int,
        window_s: float = WINDOW_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._strike = strike
        self.bytes_per_window = bytes_per_window
        self.packets_per_window = packets_per_window
        self.window_s = window_s
        self._clock = clock
        # identity -> (arrivals in the window as (time, bytes), bytes in them)
        self._seen: dict[str, tuple[deque[tuple[float, int]], list[int]]] = {}
        self.over_events = 0

    def charge(self, identity: str, nbytes: int, *, what: str = "data") -> bool:
        """Count one arrival of `nbytes` from `identity`; False (and a strike) when it is
        over the budget."""
        now = self._clock()
        arrivals, total = self._seen.setdefault(identity, (deque(), [0]))
        while arrivals and now - arrivals[0][0] > self.window_s:
            total[0] -= arrivals.popleft()[1]
        arrivals.append((now, nbytes))
        total[0] += nbytes
        if total[0] <= self.bytes_per_window and len(arrivals) <= self.packets_per_window:
            return True
        self.over_events += 1
        self._strike(identity, f"over_budget_{what}", 1 + nbytes // BYTES_PER_STRIKE)
        return False

    def usage(self, identity: str) -> tuple[int, int]:
        """(bytes, packets) counted for `identity` in the current window."""
        seen = self._seen.get(identity)
        return (seen[1][0], len(seen[0])) if seen is not None else (0, 0)

    def forget(self, identity: str) -> None:
        self._seen.pop(identity, None)
