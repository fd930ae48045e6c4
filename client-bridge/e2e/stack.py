"""E2E stack for the client-bridge browser tests: livekit-server, Postgres and the steward.

Started by the e2e tests inside the network namespace; prints one JSON line with its URLs
and runs until stdin closes (or SIGTERM). The steward runs as a child process: its own HTTP
API serves the built demo page and the dev token endpoint, plus `/e2e/contexts` (what each
agent run received from `request_context`: whose view, from which tab, with which screenshot)
and `POST /e2e/context` (one context fetch of given bounds for an asker: the image and the shape
ids the model's "in view" list would name), and `/e2e/model-requests` (how many requests the
scripted model was sent).
`POST /e2e/crash` SIGKILLs that steward and starts `steward join ROOM` in its place.
`POST /e2e/agrees` takes a tab's page (`readPage`, steward records) and says where it parts
from the mirror rebuilt from the durable outbox (the parity rules of `page_disagreements`).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any

from aiohttp import web

from steward.access import mint_token
from steward.config import DEV_API_SECRET, Settings
from steward.obs.logging import configure_logging
from steward.ports import AgentRunner, CanvasSnapshot, PromptInput, SessionPort
from steward.prompt.parts.blurry_shapes import in_view
from steward.prompt.state import PromptState
from steward.protocol.box import Box
from steward.protocol.images import sniff
from steward.service import StewardService, default_runner
from steward.store.embedded import EmbeddedPostgres
from steward_tools.bench.faults import outbox_state
from steward_tools.livekit_server import LiveKitServer
from steward_tools.rigs.executor_client import page_disagreements

CONTEXTS: list[dict[str, Any]] = []
# Requests the scripted model was sent, every role's (counted, the model itself unchanged).
MODEL_REQUESTS = [0]


def count_model_requests() -> None:
    from steward.model.scripted import ScriptedModel

    stream = ScriptedModel.stream

    def counted(self: ScriptedModel, request: Any, usage: Any) -> Any:
        MODEL_REQUESTS[0] += 1
        return stream(self, request, usage)

    ScriptedModel.stream = counted  # type: ignore[method-assign]


class RecordingSession:
    """A SessionPort that notes every context the run received."""

    def __init__(self, inner: SessionPort) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def request_context(
        self, *, bounds: Box | None = None, want_screenshot: bool = True
    ) -> CanvasSnapshot:
        ctx = await self._inner.request_context(bounds=bounds, want_screenshot=want_screenshot)
        shot = ctx.screenshot or b""
        CONTEXTS.append(
            {
                "sessionId": self._inner.session_id,
                "source": ctx.source_identity,
                # Whose view it is (the asker's), and what the run saw of it.
                "asker": ctx.asker,
                "viewport": ctx.viewport.to_dict(),
                "selection": list(ctx.selection),
                "viewNote": ctx.view_note,
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
        return await self._inner.run(RecordingSession(session), prompt)


async def steward_main(room: str, dist: Path, livekit_url: str, db_url: str, data: Path) -> None:
    """The steward (a child process, so the crash test can SIGKILL it): the recording runner,
    the HTTP API serving the page and dev tokens, and `/e2e/contexts`."""
    settings = Settings(
        livekit_url=livekit_url,
        steward_http_port=0,
        steward_data_dir=data,
        database_url=db_url,
        # The steward's own HTTP API serves the built page and the dev token endpoint.
        steward_dev_tokens=True,
        steward_demo_dir=dist,
    )
    # Its log lines on stderr (the test reads them), at STEWARD_LOG_LEVEL / _FORMAT.
    configure_logging(settings.steward_log_level, settings.steward_log_format)
    count_model_requests()
    base = default_runner(settings)
    service = StewardService(settings, runner=lambda: RecordingRunner(base()))
    await service.start(http=True)
    await service.join(room)

    async def contexts(_: web.Request) -> web.Response:
        return web.json_response(CONTEXTS)

    async def model_requests(_: web.Request) -> web.Response:
        return web.json_response({"requests": MODEL_REQUESTS[0]})

    async def context(request: web.Request) -> web.Response:
        body = await request.json()
        bounds = Box(**body["bounds"])
        runtime = service.rooms[room]
        ctx = await runtime.snapshots.fetch(bounds=bounds, asker=body["asker"], source="browser")
        shapes = {str(s["id"]): s for s in ctx.shapes}
        state = PromptState(  # only what the "in view" list reads
            message="",
            shapes=shapes,
            viewport=bounds,
            coords=None,  # type: ignore[arg-type]
            enabled_actions=(),
        )
        shot = ctx.screenshot or b""
        return web.json_response(
            {
                "source": ctx.source_identity,
                "screenshot": base64.b64encode(shot).decode(),
                "screenshotType": ctx.screenshot_type if shot else None,
                "inView": in_view(state),
            }
        )

    async def token(request: web.Request) -> web.Response:
        """A token for `identity` that carries no prompt grant (the dev endpoint's all do)."""
        identity = request.query["identity"]
        secret = settings.livekit_api_secret.get_secret_value()
        jwt = mint_token(
            settings.livekit_api_key, secret, room=room, identity=identity, can_prompt=False
        )
        return web.json_response({"token": jwt, "url": livekit_url})

    async def participant(request: web.Request) -> web.Response:
        """What the steward holds of `identity`: whether it knows it, its strikes, its runs."""
        identity = request.query["identity"]
        runtime = service.rooms[room]
        sessions = runtime.sessions.sessions
        runs = [s for s, r in sessions.items() if r.prompt.requester == identity]
        return web.json_response(
            {
                "known": runtime.participants.get(identity) is not None,
                "strikes": runtime.abuse.strikes(identity),
                "runs": runs,
            }
        )

    # Only the test's debug routes live here; everything a browser uses is the steward's.
    app = web.Application()
    app.router.add_get("/e2e/contexts", contexts)
    app.router.add_post("/e2e/context", context)
    app.router.add_get("/e2e/token", token)
    app.router.add_get("/e2e/participant", participant)
    app.router.add_get("/e2e/model-requests", model_requests)
    port = await _serve(app)
    info = {
        "page": f"http://127.0.0.1:{service.http_port}",
        "contexts": f"http://127.0.0.1:{port}/e2e/contexts",
        "context": f"http://127.0.0.1:{port}/e2e/context",
        "token": f"http://127.0.0.1:{port}/e2e/token",
        "participant": f"http://127.0.0.1:{port}/e2e/participant",
        "modelRequests": f"http://127.0.0.1:{port}/e2e/model-requests",
    }
    print(json.dumps(info), flush=True)
    await _until_stopped()
    await service.close()


async def _serve(app: web.Application) -> int:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return int(site._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]


async def _until_stopped() -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    loop.add_reader(sys.stdin.fileno(), lambda: stop.set() if not sys.stdin.read(1) else None)
    await stop.wait()


async def _ready_line(proc: asyncio.subprocess.Process, what: str, prefix: bytes) -> bytes:
    """The child's first stdout line starting with `prefix` (it may log before it)."""
    assert proc.stdout is not None

    async def read() -> bytes:
        assert proc.stdout is not None
        while line := await proc.stdout.readline():
            if line.startswith(prefix):
                return line
        raise RuntimeError(f"{what} exited before it was ready")

    return await asyncio.wait_for(read(), 60)


async def main(room: str, dist: Path) -> None:
    livekit = LiveKitServer()
    await livekit.astart()
    data = Path(tempfile.mkdtemp(prefix="steward-e2e-"))
    pg = EmbeddedPostgres(data / "pg")
    db_url = await pg.astart()
    env = {
        **os.environ,
        "LIVEKIT_URL": livekit.url,
        "LIVEKIT_API_KEY": livekit.api_key,
        "LIVEKIT_API_SECRET": livekit.api_secret or DEV_API_SECRET,
        "DATABASE_URL": db_url,
        "STEWARD_DATA_DIR": str(data),
    }
    args = [room, str(dist), livekit.url, db_url, str(data)]
    steward = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--steward", *args, env=env,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    info = json.loads(await _ready_line(steward, "the steward", b"{"))
    children = [steward]

    async def crash(_: web.Request) -> web.Response:
        """SIGKILL the steward mid-run, then start a fresh one in the room (no HTTP: the
        tabs are loaded), as a supervisor restarting a crashed process would."""
        victim = children[-1]
        victim.kill()
        await victim.wait()
        exe = Path(sys.executable).with_name("steward")
        again = await asyncio.create_subprocess_exec(
            str(exe), "join", room, "--no-http", env=env,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        children.append(again)
        line = await _ready_line(again, "the restarted steward", b"steward serving")
        return web.json_response({"killed": victim.pid, "restarted": line.decode().strip()})

    async def agrees(request: web.Request) -> web.Response:
        """Where a tab's page and the outbox mirror part ([] when they agree)."""
        page = (await request.json())["page"]
        _, mirror = await outbox_state(db_url, room)
        problems = page_disagreements(page, list(mirror.values()))
        return web.json_response({"problems": problems, "shapes": len(mirror)})

    app = web.Application()
    app.router.add_post("/e2e/crash", crash)
    app.router.add_post("/e2e/agrees", agrees)
    port = await _serve(app)
    info |= {
        "crash": f"http://127.0.0.1:{port}/e2e/crash",
        "agrees": f"http://127.0.0.1:{port}/e2e/agrees",
        "livekit": livekit.url,
    }
    print(json.dumps(info), flush=True)
    await _until_stopped()
    for child in children:
        if child.returncode is None:
            child.terminate()
            try:
                await asyncio.wait_for(child.wait(), 15)
            except TimeoutError:
                child.kill()
    pg.stop()
    livekit.stop()


if __name__ == "__main__":
    if sys.argv[1] == "--steward":
        room, dist, lk, db, data = sys.argv[2:7]
        asyncio.run(steward_main(room, Path(dist), lk, db, Path(data)))
    else:
        asyncio.run(main(sys.argv[1], Path(sys.argv[2])))
