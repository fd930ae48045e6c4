"""Flooding participants in their own process (`steward_tools.rigs.participant`), for
`steward bench abuse`.

The abuse bench's steward runs in the bench's process; a flooder there would put its own
SDK's send buffers and its CPU (chunking megabytes into FFI requests on the same event loop)
into the steward's figures. Here each flooder is a plain `rtc.Room` in a child process: the
parent writes one JSON line (`url` and the `floods`: identity, token, topic, count, size,
stream or packets), the child joins them all and says it is ready, waits for `go` on stdin,
floods until each sender sees its `can_publish_data` revoked, and prints one JSON line: what
each sent before the mute and this process's own RSS growth in MB. The flooders stay in the
room until stdin closes (the steward forgets a participant's mute when it leaves).
Usage: `python -m steward_tools.rigs.flooder` (the spec on stdin).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from livekit import rtc

from steward.tokens import mint_token
from steward_tools.rigs.participant import READY, ParticipantProcess, next_line, run_child, say

SEND_TIMEOUT_S = 20.0


def flood(
    key: str,
    secret: str,
    *,
    room: str,
    identity: str,
    topic: str,
    count: int,
    size: int,
    stream: bool,
) -> dict[str, Any]:
    """One flooder's part of the spec: a participant with no rights sending `count` streams
    (or reliable packets) of `size` bytes on `topic`."""
    token = mint_token(key, secret, room=room, identity=identity, capabilities=(), can_prompt=False)
    return {
        "identity": identity,
        "token": token,
        "topic": topic,
        "count": count,
        "size": size,
        "stream": stream,
    }


def _muted(room: rtc.Room) -> bool:
    return room.local_participant.permissions.can_publish_data is False


async def _flood(room: rtc.Room, to: str, flood: dict[str, Any]) -> int:
    """`count` streams (or reliable packets) of `size` bytes until muted; how many left."""
    lp = room.local_participant
    blob = b"\1" * int(flood["size"])
    topic = str(flood["topic"])
    sent = 0
    for _ in range(int(flood["count"])):
        if _muted(room):
            break
        # Muted mid-send, or LiveKit pushing back: the flood goes on until the mute is seen.
        with contextlib.suppress(Exception):
            async with asyncio.timeout(SEND_TIMEOUT_S):
                if flood["stream"]:
                    await lp.send_bytes(blob, topic=topic, destination_identities=[to])
                else:
                    await lp.publish_data(
                        blob, topic=topic, reliable=True, destination_identities=[to]
                    )
                sent += 1
    return sent


async def main(spec: dict[str, Any]) -> None:
    from steward_tools.bench.harness import self_rss_mb

    rooms: dict[str, rtc.Room] = {}
    try:
        for flood in spec["floods"]:
            room = rtc.Room()
            await room.connect(spec["url"], flood["token"])
            rooms[flood["identity"]] = room
        say(READY)
        if await next_line() != "go":
            return
        before = self_rss_mb(trim=True)
        sent = await asyncio.gather(
            *(_flood(rooms[f["identity"]], spec["to"], f) for f in spec["floods"])
        )
        say(
            {
                "sent": {f["identity"]: n for f, n in zip(spec["floods"], sent, strict=True)},
                "rss_mb_growth": round(self_rss_mb(trim=True) - before, 1),
            }
        )
        await next_line()  # until the parent closes stdin
    finally:
        for room in rooms.values():
            with contextlib.suppress(Exception):
                await room.disconnect()


class Flooders:
    """The parent's side: the child process, started and joined, flooding on `go()`."""

    def __init__(self, child: ParticipantProcess) -> None:
        self.child = child

    @classmethod
    async def start(cls, url: str, to: str, floods: list[dict[str, Any]]) -> Flooders:
        spec = {"url": url, "to": to, "floods": floods}
        child = await ParticipantProcess.start(
            "steward_tools.rigs.flooder", spec, timeout=60, what="the flooders", quiet=True
        )
        return cls(child)

    async def go(self) -> None:
        await self.child.send("go")

    async def result(self, timeout: float = 120) -> dict[str, Any]:
        """What the child printed once every flooder was muted or done."""
        return await self.child.read(timeout, "the flood")

    async def close(self) -> None:
        """Closing stdin makes the flooders leave; killed if they have not within 10 s."""
        await self.child.close(10)


if __name__ == "__main__":
    run_child(main)
