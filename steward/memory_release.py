"""Memory the steward freed, handed back to the system once the participants that made it
grow have gone (left, or muted).

What a flood or a hostile answer makes the steward hold (stream chunks, inflated shapes,
screenshots, the SDK's native buffers) is freed when the room lets go of it, but glibc's
malloc keeps freed pages in its arenas for reuse: the process's RSS stays at its peak long
after the attack, which reads as a leak to whoever watches it and is memory other rooms on
the same machine cannot have. `release_soon()` asks for one `malloc_trim(0)`, run off the
event loop `QUIET_S` after the last request and at most once every `MIN_INTERVAL_S` in the
process (a trim walks every arena: cheap once in a while, not on every leave). Where glibc
is not the C library it does nothing.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import threading
import time
from collections.abc import Callable

from steward.obs.logging import get_logger

log = get_logger(__name__)

QUIET_S = 1.0
MIN_INTERVAL_S = 5.0


def _load_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    try:
        trim: Callable[[int], int] = ctypes.CDLL(name or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
    return trim


_trim = _load_trim()
_lock = threading.Lock()  # rooms of one worker run on event loops in threads of their own
_last_at = 0.0
_pending: set[asyncio.AbstractEventLoop] = set()
trims = 0  # how many ran (for tests and the operator's view)


def release_soon() -> None:
    """Hand freed memory back to the system shortly (call on the event loop)."""
    if _trim is None:
        return
    loop = asyncio.get_running_loop()
    with _lock:
        if loop in _pending:
            return
        _pending.add(loop)
    loop.call_later(QUIET_S, _due, loop)


def _due(loop: asyncio.AbstractEventLoop) -> None:
    global _last_at
    with _lock:
        wait = _last_at + MIN_INTERVAL_S - time.monotonic()
        if wait <= 0:
            _last_at = time.monotonic()
            _pending.discard(loop)
    if wait > 0:
        loop.call_later(wait, _due, loop)
        return
    loop.run_in_executor(None, _release)


def _release() -> None:
    global trims
    assert _trim is not None
    started = time.monotonic()
    released = _trim(0)
    trims += 1
    log.info(
        "memory_released", returned=bool(released), ms=round((time.monotonic() - started) * 1e3, 1)
    )
