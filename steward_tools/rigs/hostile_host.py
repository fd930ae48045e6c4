"""A host tab in a process of its own (`steward_tools.rigs.participant`), honest until told
otherwise, for `steward bench abuse`.

What a hostile host sends (a gzip bomb, 5 MiB of noise as a JPEG) would sit in the bench's
own process if its client ran there, and be counted as the steward's memory and CPU. The
spec is `url`, `token`, `identity` and `steward`; the child joins as a headless browser with
every capability and says it is ready; each command line is a context mode it answers with
from then on (`ok`, `bomb_and_fake_jpeg`, ...), acknowledged with `{"mode": ...}`; stdin
closing makes it leave.
Usage: `python -m steward_tools.rigs.hostile_host` (the spec on stdin).
"""

from __future__ import annotations

import contextlib
from typing import Any, cast, get_args

from steward_tools.headless.client import ContextMode, Faults, HeadlessClient
from steward_tools.rigs.participant import READY, ParticipantProcess, next_line, run_child, say


async def main(spec: dict[str, Any]) -> None:
    client = HeadlessClient(
        url=spec["url"],
        token=spec["token"],
        identity=spec["identity"],
        steward_identity=spec["steward"],
        faults=Faults(),
    )
    await client.connect()
    try:
        say(READY)
        while mode := await next_line():
            if mode in get_args(ContextMode):
                client.faults.context_mode = cast(ContextMode, mode)
            say({"mode": client.faults.context_mode})
    finally:
        with contextlib.suppress(Exception):
            await client.disconnect()


class HostileHost:
    """The parent's side: the child process, joined, its context mode set by `answer`."""

    def __init__(self, child: ParticipantProcess) -> None:
        self.child = child

    @classmethod
    async def start(cls, url: str, token: str, identity: str, steward: str) -> HostileHost:
        spec = {"url": url, "token": token, "identity": identity, "steward": steward}
        child = await ParticipantProcess.start(
            "steward_tools.rigs.hostile_host", spec, timeout=60, what="the hostile host", quiet=True
        )
        return cls(child)

    async def answer(self, mode: ContextMode) -> None:
        await self.child.send(mode)
        if (await self.child.read(60, "the hostile host's mode")).get("mode") != mode:
            raise RuntimeError(f"hostile host did not switch to {mode}")

    async def close(self) -> None:
        """Stdin closed: it leaves; killed if it has not within 10 s."""
        await self.child.close(10)


if __name__ == "__main__":
    run_child(main)
