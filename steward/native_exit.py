"""Leaving a process that used livekit's native runtime.

That runtime sometimes panics while it disposes itself at interpreter exit ("thread caused
non-unwinding panic. aborting."), turning a finished, successful process into an abort.
Callers stop their own servers first, then leave through here.
"""

from __future__ import annotations

import os
import sys


def exit_skipping_native_teardown(code: int) -> None:
    """Exit at once with `code` if livekit's native runtime was loaded; else return."""
    if "livekit.rtc" in sys.modules:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
