"""A participant in its own process that sends one SDK-compressed byte stream of zeros.

`steward bench abuse` measures the steward's RSS while this arrives; sending from the bench's
own process would put the sender's copies of the buffer into the same RSS figure.
Usage: `python -m steward_tools.rigs.stream_sender URL TOKEN TO TOPIC MIB`.
"""

from __future__ import annotations

import asyncio
import sys

from livekit import rtc

from steward.native_exit import exit_skipping_native_teardown

COMPRESSED_MIB = 256  # the original hole: this stream doubled RSS (116 -> 245 MB)


async def send(url: str, token: str, to: str, topic: str, mib: int) -> str:
    room = rtc.Room()
    await room.connect(url, token)
    try:
        await room.local_participant.send_bytes(
            bytes(mib << 20), topic=topic, destination_identities=[to], compress=True
        )
        return "sent"
    except Exception as err:  # the steward may cut us off: report it, it is the point
        return f"stopped: {err!r}"[:200]
    finally:
        await room.disconnect()


async def send_watching(
    url: str, token: str, to: str, topic: str, watch: int | str, mib: int = COMPRESSED_MIB
) -> tuple[str, float]:
    """Send from a child process while sampling `watch`'s RSS (a pid, or "self"); returns
    the sender's outcome and the watched process's peak growth in MB."""
    from steward_tools.bench.harness import rss_mb

    start = rss_mb(watch)
    peak = start

    async def sample() -> None:
        nonlocal peak
        while True:
            peak = max(peak, rss_mb(watch))
            await asyncio.sleep(0.05)

    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "steward_tools.rigs.stream_sender",
        url,
        token,
        to,
        topic,
        str(mib),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    sampler = asyncio.create_task(sample())
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), 120)
        await asyncio.sleep(1.0)  # what the core holds after the sender is gone
    finally:
        sampler.cancel()
        if proc.returncode is None:
            proc.kill()
    return out.decode().strip(), peak - start


def main(argv: list[str]) -> int:
    url, token, to, topic, mib = argv
    print(asyncio.run(send(url, token, to, topic, int(mib))), flush=True)
    return 0


if __name__ == "__main__":
    exit_skipping_native_teardown(main(sys.argv[1:]))
