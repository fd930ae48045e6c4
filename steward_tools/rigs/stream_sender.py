"""A participant in its own process that sends one SDK-compressed byte stream of zeros.

`steward bench abuse` measures the steward's RSS while this arrives; sending from the bench's
own process would put the sender's copies of the buffer into the same RSS figure.
It speaks as every participant process does (`steward_tools.rigs.participant`): its spec
(`url`, `token`, `to`, `topic`, `mib`) on stdin, `ready` once joined, then one result line.
"""

from __future__ import annotations

import asyncio
from typing import Any

from livekit import rtc

from steward_tools.rigs.participant import READY, ParticipantProcess, run_child, say

COMPRESSED_MIB = 256  # the original hole: this stream doubled RSS (116 -> 245 MB)


async def main(spec: dict[str, Any]) -> None:
    room = rtc.Room()
    await room.connect(spec["url"], spec["token"])
    say(READY)
    try:
        await room.local_participant.send_bytes(
            bytes(int(spec["mib"]) << 20),
            topic=spec["topic"],
            destination_identities=[spec["to"]],
            compress=True,
        )
        outcome = "sent"
    except Exception as err:  # the steward may cut us off: report it, it is the point
        outcome = f"stopped: {err!r}"[:200]
    finally:
        await room.disconnect()
    say({"event": "result", "outcome": outcome})


async def send_watching(
    url: str, token: str, to: str, topic: str, watch: int | str, mib: int = COMPRESSED_MIB
) -> tuple[str, float]:
    """Send from a child process while sampling `watch`'s RSS (a pid, or "self"); returns
    the sender's outcome and the watched process's peak growth in MB."""
    from steward_tools.process_usage import rss_mb

    start = rss_mb(watch)
    peak = start

    async def sample() -> None:
        nonlocal peak
        while True:
            peak = max(peak, rss_mb(watch))
            await asyncio.sleep(0.05)

    sampler = asyncio.create_task(sample())
    sender: ParticipantProcess | None = None
    try:
        spec = {"url": url, "token": token, "to": to, "topic": topic, "mib": mib}
        sender = await ParticipantProcess.start(
            "steward_tools.rigs.stream_sender", spec, timeout=60, what="the sender", quiet=True
        )
        outcome = str((await sender.read(120, "the stream"))["outcome"])
        await asyncio.sleep(1.0)  # what the core holds after the sender is gone
    finally:
        sampler.cancel()
        if sender is not None:
            await sender.close()
    return outcome, peak - start


if __name__ == "__main__":
    run_child(main)
