"""A participant in a process of its own, both sides of it: `python -m steward_tools.rigs.NAME`.

A bench runs its participants (headless clients, an observer, flooders, a stream sender) in
child processes, so their SDK's buffers and CPU stay out of the steward's figures. They all
speak one way:

- the parent writes one JSON spec as the first stdin line;
- the child connects, prints `{"event": "ready"}`, then reports one JSON object a line;
- further stdin lines are the parent's commands (`go`); stdin closing means leave.

`run_child` is the child's side (its `main(spec)` does the connecting and the work, with
`say` and `next_line`); `ParticipantProcess` is the parent's. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator, Callable, Coroutine
from pathlib import Path
from typing import Any

from steward.native_exit import exit_skipping_native_teardown
from steward_tools.waiting import bounded

READY = {"event": "ready"}
# A clients process reports every action of every client in one line.
LINE_LIMIT = 256 * 1024 * 1024


# -- the child's side --------------------------------------------------------------------


def say(obj: dict[str, Any]) -> None:
    """One JSON line to the parent."""
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


async def next_line() -> str:
    """The parent's next command, stripped; "" once the parent closed stdin."""
    line: str = await asyncio.to_thread(sys.stdin.readline)
    return line.strip()


def run_child(main: Callable[[dict[str, Any]], Coroutine[Any, Any, None]]) -> None:
    """Read the spec, run `main(spec)` (which says `READY` once connected), then leave
    without livekit's native teardown. Log lines go to stderr, errors only."""
    from steward.obs.logging import configure_logging

    configure_logging("error", "json")
    spec = json.loads(sys.stdin.readline())
    asyncio.run(main(spec))
    exit_skipping_native_teardown(0)


# -- the parent's side -------------------------------------------------------------------


class ParticipantProcess:
    """`python -m module` started with its spec, joined (its `ready` line awaited), read and
    commanded line by line, and ended (stdin closed, then killed if it lingers)."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.pid = proc.pid
        # Lines the child reported before it was ready (an observer's first sightings).
        self.early: list[dict[str, Any]] = []

    @classmethod
    async def start(
        cls, module: str, spec: dict[str, Any], *, timeout: float, what: str, quiet: bool = False
    ) -> ParticipantProcess:
        """Started and ready within `timeout` seconds, else killed and `RuntimeError` or
        `TimeoutError` naming `what`. `quiet` drops the child's stderr."""
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            module,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL if quiet else None,
            limit=LINE_LIMIT,
        )
        child = cls(proc)
        try:
            await child.send(json.dumps(spec))
            await bounded(child.until_ready(what), timeout, what)
        except BaseException:
            await child.kill()
            raise
        return child

    async def until_ready(self, what: str) -> None:
        """Reports before `ready` are kept in `early`."""
        while (line := await self._line()) != READY:
            if line is None:
                raise RuntimeError(f"{what}: the process exited before it was ready")
            self.early.append(line)

    async def _line(self) -> dict[str, Any] | None:
        assert self.proc.stdout is not None
        raw = await self.proc.stdout.readline()
        if not raw:
            return None
        value: dict[str, Any] = json.loads(raw)
        return value

    async def send(self, line: str) -> None:
        """One command line to the child."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        await self.proc.stdin.drain()

    async def read(self, timeout: float, what: str) -> dict[str, Any]:
        """The child's next report, within `timeout` seconds."""
        line: dict[str, Any] | None = await bounded(self._line(), timeout, what)
        if line is None:
            raise RuntimeError(f"{what}: the process exited early")
        return line

    async def lines(self) -> AsyncIterator[dict[str, Any]]:
        """Every report from now until the child exits (bound it from outside)."""
        while (line := await self._line()) is not None:
            yield line

    def cpu_s(self) -> float | None:
        """User + system CPU of the child so far (from /proc); None once it is gone."""
        try:
            fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    async def close(self, timeout: float = 10) -> None:
        """Stdin closed (the child leaves its rooms and exits); killed if not within
        `timeout` seconds."""
        if self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.close()
        try:
            await bounded(self.proc.wait(), timeout, "the participant process exit")
        except TimeoutError:
            await self.kill()

    async def kill(self) -> None:
        if self.proc.returncode is None:
            self.proc.kill()
            with contextlib.suppress(Exception):
                await bounded(self.proc.wait(), 10, "the killed participant process")
