"""Proof that a process came through a burst of stack-dump signals: a dump written after it."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from steward.obs import stack_dump


def dump_after_burst(pid: int, text: Callable[[], str]) -> None:
    """Signal `pid` until a stack dump beyond those in `text()` now appears (a signal that
    lands while a dump is written is dropped by design, so one may not be enough). A dump
    after the burst says the process ran every handler of it: a crash would have come first.
    Blocking; bounded at about 20 s."""
    before = text().count(stack_dump.HEADER)
    for _ in range(20):
        os.kill(pid, stack_dump.SAFE_SIGNAL)
        for _ in range(10):
            if text().count(stack_dump.HEADER) > before:
                return
            time.sleep(0.1)
    raise AssertionError("no stack dump after the burst")
