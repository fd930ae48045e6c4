"""E2E stack for the client-bridge browser tests: livekit-server + the steward + a page server.

Started by the e2e tests inside the network namespace; prints one JSON line with its URLs
and runs until stdin closes (or SIGTERM). The steward's own HTTP API serves the built demo
page and the dev token endpoint; this script adds only `/e2e/contexts`: what each agent run
received from `request_context` (to prove the host's screenshot arrived).
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any

from aiohttp import web

from steward.config import Settings
from steward.fairies.ports import AgentRunner, CanvasContext, PromptInput, SessionPort
from steward.livekit_server import LiveKitServer
from steward.protocol.images import sniff
from steward.protocol.messages import Box
from steward.service import StewardService, default_runner

CONTEXTS: list[dict[str, Any]] = []


class RecordingSession:
    """A SessionPort that notes every context the run received."""

    def __init__(self, inner: SessionPort) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def request_context(
        self, *, bounds: Box | None = None, want_screenshot: bool = True
    ) -> CanvasContext:
        ctx = await self._inner.request_context(bounds=bounds, want_screenshot=want_screenshot)
        shot = ctx.screenshot or b""
        CONTEXTS.append(
            {
                "source": ctx.source_identity,
                "degraded": ctx.degraded,
                "screenshotBytes": len(shot),
                "screenshotType": ctx.screenshot_type if shot else None,
                # The bytes' own signature: what the browser really encoded.
                "signature": sniff(shot),
                "shapes": len(ctx.shapes),
                "docVersion": ctx.doc_version,
            }
        )
        return ctx


class RecordingRunner:
    def __init__(self, inner: AgentRunner) -> None:
        self._inner = inner

    async def run(self, session: SessionPort, prompt: PromptInput) -> str:
        return await self._inner.run(RecordingSession(session), prompt)  # type: ignore[arg-type]


async def main(room: str, dist: Path) -> None:
    livekit = LiveKitServer()
    await livekit.astart()
    data_dir = Path(tempfile.mkdtemp(prefix="steward-e2e-"))
    settings = Settings(
        livekit_url=livekit.url,
        steward_http_port=0,
        steward_data_dir=data_dir,
        database_url=None,
        # The steward's own HTTP API serves the built page and the dev token endpoint.
        steward_dev_tokens=True,
        steward_demo_dir=dist,
    )
    base = default_runner(settings)
    service = StewardService(settings, runner=lambda: RecordingRunner(base()))
    await service.start(http=True)
    await service.join(room)

    async def contexts(_: web.Request) -> web.Response:
        return web.json_response(CONTEXTS)

    # Only the test's debug route lives here; everything a browser uses is the steward's.
    app = web.Application()
    app.router.add_get("/e2e/contexts", contexts)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    info = {
        "page": f"http://127.0.0.1:{service.http_port}",
        "contexts": f"http://127.0.0.1:{port}/e2e/contexts",
        "livekit": livekit.url,
    }
    print(json.dumps(info), flush=True)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    loop.add_reader(sys.stdin.fileno(), lambda: stop.set() if not sys.stdin.read(1) else None)
    await stop.wait()
    await runner.cleanup()
    await service.close()
    livekit.stop()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2])))
