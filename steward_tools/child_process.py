"""Ending a server child process the tools started (livekit-server, redis-server)."""

from __future__ import annotations

import subprocess
import tempfile


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
