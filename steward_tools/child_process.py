"""Ending a child process the tools started: a server (livekit-server, redis-server), or a
bench's participants that leave when their stdin closes (flooders, a hostile host)."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import tempfile


async def leave_child(proc: asyncio.subprocess.Process, grace: float = 10.0) -> None:
    """Close its stdin (it leaves its rooms and exits); killed if it has not within `grace`
    seconds (reaped either way, within a bound)."""
    if proc.stdin is not None:
        proc.stdin.close()
    try:
        async with asyncio.timeout(grace):
            await proc.wait()
    except TimeoutError:
        proc.kill()
        with contextlib.suppress(Exception):
            async with asyncio.timeout(grace):
                await proc.wait()


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
