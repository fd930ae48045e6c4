"""Every thread's Python stack on a signal, for a worker that stopped making progress.

Two signals, because no single way is both safe and sure to answer:
- `SIGUSR1` runs a Python handler on the main thread: it reads the stacks under the
  interpreter's own locks, so it never harms a running worker, but it waits for the main
  thread to run Python again.
- `SIGUSR2` is `faulthandler`: it answers even while a thread holds the GIL in C, but it walks
  other threads' frames unlocked and can crash a process whose threads are running (seen when
  livekit's native threads call back into Python). Send it only to a worker you will kill.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
import threading
import traceback
from types import FrameType

SAFE_SIGNAL = signal.SIGUSR1
LAST_RESORT_SIGNAL = signal.SIGUSR2
HEADER = "Thread stacks (most recent call last)"


def format_stacks() -> str:
    """Every live thread's stack, named, in one block of text."""
    names = {t.ident: t.name for t in threading.enumerate()}
    parts = [f"{HEADER}, pid {os.getpid()}:\n"]
    for ident, frame in sys._current_frames().items():
        parts.append(f"\n--- thread {names.get(ident, '?')} ({ident}) ---\n")
        parts.extend(traceback.format_stack(frame))
    return "".join(parts)


_dumping = False


def _on_signal(_signum: int, _frame: FrameType | None) -> None:
    # Signals sent while a dump is written are dropped, or handlers would nest without end.
    # A plain flag, not a threading.Event: the Event's own lock, taken by an interrupted
    # handler, made the next one wait inside `acquire`, where more signals nested on it.
    global _dumping
    if _dumping:
        return
    _dumping = True
    try:
        # os.write, not sys.stderr: the handler may interrupt a write in progress there.
        data = format_stacks().encode(errors="replace")
        while data:
            data = data[os.write(2, data) :]
    finally:
        _dumping = False


def install() -> None:
    """Register both signals; call from the main thread."""
    signal.signal(SAFE_SIGNAL, _on_signal)
    faulthandler.register(LAST_RESORT_SIGNAL, all_threads=True)
