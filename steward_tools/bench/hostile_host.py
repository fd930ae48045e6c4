"""A host tab in a process of its own, honest until told otherwise, for `steward bench abuse`.

What a hostile host sends (a gzip bomb, 5 MiB of noise as a JPEG) would sit in the bench's
own process if its client ran there, and be counted as the steward's memory and CPU. The
parent writes one JSON line (`url`, `token`, `steward`), the child joins as a headless
browser with every capability and prints `ready`; each further line is a context mode it
answers with from then on (`ok`, `bomb_and_fake_jpeg`, ...), acknowledged by a line `mode`;
closing stdin makes it leave.
Usage: `python -m steward_tools.bench.hostile_host` (the spec on stdin).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from typing import Any, cast, get_args

from steward.native_exit import exit_skipping_native_teardown
from steward_tools.child_process import leave_child
from steward_tools.headless.client import ContextMode, Faults, HeadlessClient


async def _line() -> str:
    line: str = await asyncio.to_thread(sys.stdin.readline)
    return line


async def run(spec: dict[str, Any]) -> None:
    client = HeadlessClient(
        url=spec["url"],
        token=spec["token"],
        identity=spec["identity"],
        steward_identity=spec["steward"],
        faults=Faults(),
    )
    await client.connect()
    try:
        print("ready", flush=True)
        while line := await _line():
            mode = line.strip()
            if mode in get_args(ContextMode):
                client.faults.context_mode = cast(ContextMode, mode)
            print(json.dumps({"mode": client.faults.context_mode}), flush=True)
    finally:
        with contextlib.suppress(Exception):
            await client.disconnect()


class HostileHost:
    """The parent's side: the child process, joined, its context mode set by `answer`."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    @classmethod
    async def start(cls, url: str, token: str, identity: str, steward: str) -> HostileHost:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "steward_tools.bench.hostile_host",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        host = cls(proc)
        try:
            spec = {"url": url, "token": token, "identity": identity, "steward": steward}
            await host.send_line(json.dumps(spec))
            if await host.read_line() != "ready":
                raise RuntimeError("hostile host did not start")
        except BaseException:
            await host.close()
            raise
        return host

    async def send_line(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        await self.proc.stdin.drain()

    async def read_line(self, timeout: float = 60) -> str:
        assert self.proc.stdout is not None
        async with asyncio.timeout(timeout):
            return (await self.proc.stdout.readline()).decode().strip()

    async def answer(self, mode: ContextMode) -> None:
        await self.send_line(mode)
        if json.loads(await self.read_line()).get("mode") != mode:
            raise RuntimeError(f"hostile host did not switch to {mode}")

    async def close(self) -> None:
        """Closing stdin makes it leave; killed if it has not within 10 s."""
        await leave_child(self.proc)


def main() -> int:
    asyncio.run(run(json.loads(sys.stdin.readline())))
    return 0


if __name__ == "__main__":
    exit_skipping_native_teardown(main())
