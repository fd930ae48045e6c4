"""Log lines for refusals that repeat: the first `burst` of a kind in `interval_s` at once,
then at most one line per `interval_s` carrying how many happened since (`count`), so a
flood of thousands of the same refusal costs a few lines, not thousands."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

# Kinds remembered at once; past this the oldest are forgotten (their next line comes early).
MAX_KEYS = 4096


class SampledLog:
    """A logger for refusals that repeat: a burst of lines, then one line per interval with the
    count since."""

    def __init__(
        self,
        logger: Any,  # a structlog logger (steward.obs.logging.get_logger)
        *,
        interval_s: float = 5.0,
        burst: int = 5,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._log = logger
        self.interval_s = interval_s
        self.burst = burst
        self._clock = clock
        # key -> (window start, lines in it, happened since the last line)
        self._last: dict[tuple[str, ...], tuple[float, int, int]] = {}
        self.lines = 0

    def warning(self, key: tuple[str, ...], event: str, **fields: Any) -> None:
        self._emit(self._log.warning, key, event, fields)

    def info(self, key: tuple[str, ...], event: str, **fields: Any) -> None:
        self._emit(self._log.info, key, event, fields)

    def _emit(
        self, write: Callable[..., Any], key: tuple[str, ...], event: str, fields: dict[str, Any]
    ) -> None:
        now = self._clock()
        start, lines, unlogged = self._last.pop(key, (now, 0, 0))  # re-inserted last below
        if now - start >= self.interval_s:
            start, lines = now, 0
        if lines >= self.burst:
            self._last[key] = (start, lines, unlogged + 1)
            if not unlogged:  # the first held back: its count goes out when the window ends
                self._flush_later(start + self.interval_s - now, write, key, event, fields)
            return
        count = 1 + unlogged
        self._last[key] = (start, lines + 1, 0)
        while len(self._last) > MAX_KEYS:
            del self._last[next(iter(self._last))]
        self.lines += 1
        write(event, count=count, **fields)

    def _flush_later(
        self,
        delay: float,
        write: Callable[..., Any],
        key: tuple[str, ...],
        event: str,
        fields: dict[str, Any],
    ) -> None:
        """Without this, refusals held back in a window that no later refusal follows would
        never reach the log: every refusal must be counted in some line."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (plain unit use): the next line carries the count
            return
        loop.call_later(max(0.0, delay), self._flush, write, key, event, fields)

    def _flush(
        self, write: Callable[..., Any], key: tuple[str, ...], event: str, fields: dict[str, Any]
    ) -> None:
        state = self._last.get(key)
        if state is None or not state[2]:
            return  # a later line already carried the count, or the key was forgotten
        start, lines, unlogged = state
        self._last[key] = (start, lines, 0)
        self.lines += 1
        write(event, count=unlogged, **fields)
