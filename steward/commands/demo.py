"""`steward demo --headless --json`: one end-to-end run with three headless browsers.

Starts a loopback livekit-server, Postgres (DATABASE_URL, else a throwaway embedded one),
the steward in-process, joins three headless clients to one room, runs a prompt from one of
them, then a fairy project (`project: …`: an orchestrator plans tasks, drones draw them in
parallel), waits until every client applied everything, and prints one JSON object (the
project under `project`). Exits non-zero when the run fails. Stops everything it started.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from steward.commands._common import print_json, setup
from steward.fairies.fixed_script import FixedScriptRunner
from steward.headless.client import HeadlessClient
from steward.livekit_server import LiveKitServer
from steward.room.connection import RoomRuntime
from steward.service import StewardService, default_runner
from steward.store.embedded import EmbeddedPostgres

DEFAULT_PROMPT = "Draw a flow chart of our signup: sign up, verify email, welcome."
DEFAULT_PROJECT = "draw a farm below the flow chart"


async def _wait(cond: Any, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


async def _project(
    service: StewardService,
    runtime: RoomRuntime,
    clients: list[HeadlessClient],
    prompt: str,
    timeout: float,
) -> dict[str, Any]:
    """A fairy project from the first client; its figures for the `project` key."""
    reply = await clients[0].prompt(f"project: {prompt}")
    if reply.session_id is None:
        return {"ok": False, "error": reply.error}
    status = await clients[0].wait_status(reply.session_id, timeout=timeout)
    settled = await _wait(
        lambda: (
            runtime.broadcaster.total_unacked() == 0
            and all(c.shapes == runtime.mirror.shapes for c in clients)
        ),
        20,
    )
    summary = service.fairies.project_summary(runtime.room_id) if service.fairies else None
    if summary is None:
        return {"ok": False, "error": "no project was started", "status": status}
    canvases = [c.shapes for c in clients]
    return {
        **summary,
        "session_status": status,
        "shapes": len(canvases[0]),
        "canvases_identical": all(c == canvases[0] for c in canvases),
        "mirror_matches_clients": runtime.mirror.shapes == canvases[0],
        "ok": bool(status == "done" and settled and summary["status"] == "done"),
    }


async def run_demo(
    prompt: str = DEFAULT_PROMPT,
    clients_n: int = 3,
    runner: str = "agent",
    timeout: float = 60,
    project: str | None = DEFAULT_PROJECT,
) -> dict[str, Any]:
    settings = setup()
    started = time.monotonic()
    server = LiveKitServer()
    pg: EmbeddedPostgres | None = None
    tmp: tempfile.TemporaryDirectory[str] | None = None
    service: StewardService | None = None
    clients: list[HeadlessClient] = []
    result: dict[str, Any] = {"ok": False}
    try:
        await server.astart()
        db_url = settings.database_url
        if db_url is None:
            tmp = tempfile.TemporaryDirectory(prefix="steward-demo-pg-")
            pg = EmbeddedPostgres(Path(tmp.name))
            db_url = await pg.astart()
        settings = settings.model_copy(
            update={
                "livekit_url": server.url,
                "livekit_api_key": server.api_key,
                "livekit_api_secret": type(settings.livekit_api_secret)(server.api_secret),
                "database_url": db_url,
            }
        )
        factory = (lambda: FixedScriptRunner()) if runner == "fixed" else default_runner(settings)
        service = StewardService(settings, runner=factory)
        await service.start(http=False)
        room = f"demo-{uuid.uuid4().hex[:6]}"
        runtime = await service.join(room)
        for i in range(clients_n):
            client = HeadlessClient.create(
                server.url,
                server.api_key,
                server.api_secret,
                room=room,
                identity=f"browser-{i + 1}",
                steward_identity=settings.steward_identity,
            )
            await client.connect()
            clients.append(client)
        await _wait(lambda: len(runtime.participants.appliers()) == clients_n, 15)
        reply = await clients[0].prompt(prompt)
        if reply.session_id is None:
            result["error"] = reply.error
            return result
        sid = reply.session_id
        status = await clients[0].wait_status(sid, timeout=timeout)
        stream = runtime.broadcaster.stats(sid)
        settled = await _wait(
            lambda: (
                all(c.applied_seq(sid) == stream.last_seq for c in clients)
                and runtime.broadcaster.total_unacked() == 0
            ),
            20,
        )
        session_result = await runtime.dispatcher.wait(sid, timeout=10)
        canvases = [c.shapes for c in clients]
        identical = all(c == canvases[0] for c in canvases)
        result = {
            "ok": False,
            "rooms": 1,
            "clients_per_room": clients_n,
            "sessions": 1,
            "runner": runner,
            "outcome": session_result.outcome,
            "status": status,
            "envelopes": stream.envelopes,
            "actions_sent": stream.actions,
            "actions_applied_per_client": [c.stats.actions_applied for c in clients],
            "partials_applied_per_client": [c.stats.partials_applied for c in clients],
            "duplicates_applied": sum(c.stats.duplicates_applied for c in clients),
            "out_of_order_applied": sum(c.stats.out_of_order_applied for c in clients),
            "retransmits": stream.retransmits,
            "shapes": len(canvases[0]),
            "canvases_identical": identical,
            "mirror_matches_clients": runtime.mirror.shapes == canvases[0],
            "time_to_first_envelope_s": session_result.summary.get("time_to_first_envelope_s"),
            "elapsed_s": 0.0,
        }
        result["ok"] = bool(
            status == "done"
            and settled
            and identical
            and result["mirror_matches_clients"]
            and result["duplicates_applied"] == 0
            and result["out_of_order_applied"] == 0
            and stream.actions > 0
        )
        if project:
            result["project"] = await _project(service, runtime, clients, project, timeout)
            result["ok"] = bool(result["ok"] and result["project"]["ok"])
            result["duplicates_applied"] = sum(c.stats.duplicates_applied for c in clients)
            result["out_of_order_applied"] = sum(c.stats.out_of_order_applied for c in clients)
        return result
    except Exception as err:
        result["error"] = f"{type(err).__name__}: {err}"
        return result
    finally:
        for c in clients:
            with contextlib.suppress(Exception):
                await c.disconnect()
        if service is not None:
            await service.close()
        if pg is not None:
            pg.stop()
        if tmp is not None:
            tmp.cleanup()
        server.stop()
        result["elapsed_s"] = round(time.monotonic() - started, 3)


def _run(args: argparse.Namespace) -> int:
    if not args.headless:
        print("only --headless is built here; the browser demo page comes with client-bridge")
        return 2
    project = None if args.no_project else args.project
    result = asyncio.run(run_demo(args.prompt, args.clients, args.runner, args.timeout, project))
    if args.json:
        print_json(result)
    else:
        for key, value in result.items():
            print(f"{key:28} {value}")
    return 0 if result.get("ok") else 1


def register(sub: Any) -> None:
    p = sub.add_parser("demo", help="end-to-end run: LiveKit, Postgres, steward, 3 clients")
    p.add_argument("--headless", action="store_true", help="use headless Python clients")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--prompt", default=DEFAULT_PROMPT)
    p.add_argument("--clients", type=int, default=3)
    p.add_argument(
        "--runner",
        choices=("agent", "fixed"),
        default="agent",
        help="agent: the canvas agent with the configured model; fixed: a fixed action script",
    )
    p.add_argument("--timeout", type=float, default=60.0)
    p.add_argument("--project", default=DEFAULT_PROJECT, help="the fairy project to run after")
    p.add_argument("--no-project", action="store_true", help="skip the fairy project")
    p.set_defaults(handler=_run)
