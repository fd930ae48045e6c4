"""Child processes the tools start: ending a server (livekit-server, redis-server), and a
child that must not outlive its parent however the parent ends."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TypeVar

T = TypeVar("T")

# Run by a fresh interpreter between fork and the real program: single-threaded there, so
# unlike `preexec_fn` in a parent running native threads it cannot deadlock. The death signal
# survives the exec; a parent gone before it was set is noticed by the changed parent id.
_TIE = """\
import ctypes, os, signal, sys
prctl = getattr(ctypes.CDLL(None), "prctl", None)
if prctl is not None:
    prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
if os.getppid() != int(sys.argv[1]):
    sys.exit(1)
os.execv(sys.argv[2], sys.argv[2:])
"""


def tied_to_parent(argv: Sequence[str]) -> list[str]:
    """`argv` run so that the child is SIGKILLed when this process ends, even by SIGKILL (on
    Linux; elsewhere it runs untied). The child keeps its pid (the program is exec'd in
    place). Start it from the thread that stays alive (the event loop's): the kernel ties
    the child to the thread that forked it."""
    return [sys.executable, "-c", _TIE, str(os.getpid()), *argv]


def run_until_signalled(main: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """`asyncio.run(main())`, with SIGTERM and SIGHUP cancelling it as Ctrl-C does: its
    `finally` blocks stop what it started (servers, children) before the process ends,
    where the default action would end it at once and leave them running."""

    received: list[int] = []

    async def guarded() -> T:
        task = asyncio.ensure_future(main())
        loop = asyncio.get_running_loop()

        def stop(sig: signal.Signals) -> None:
            received.append(int(sig))
            task.cancel()

        for sig in (signal.SIGTERM, signal.SIGHUP):
            loop.add_signal_handler(sig, stop, sig)
        return await task

    try:
        return asyncio.run(guarded())
    except asyncio.CancelledError:
        if not received:
            raise
        raise SystemExit(128 + received[0]) from None  # the shell's status for that signal


def stop_child(
    proc: subprocess.Popen[bytes] | None,
    workdir: tempfile.TemporaryDirectory[str] | None = None,
    grace: float = 5.0,
) -> None:
    """SIGTERM, then SIGKILL if it is still there after `grace` seconds (reaped either way);
    then its throwaway directory is removed."""
    if proc is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if workdir is not None:
        workdir.cleanup()
