"""`steward demo --headless --json`: one end-to-end run with three headless browsers.

Starts a loopback livekit-server, Postgres (DATABASE_URL, else a throwaway embedded one),
the steward in-process, joins three headless clients to one room (two of them looking at
different parts of the canvas), runs a prompt from one of them, then first-run sentences from
the two tabs in turn (`runs`), then a fairy project (`project: …`: an orchestrator plans
tasks, drones draw them in parallel), waits until every client applied everything, and prints
one JSON object: each run's quality report (`quality`), the project's, and their sums
(`quality_totals`, with `destructive_outside_clear`: runs that deleted shapes without being
asked to delete or clear). Exits non-zero when the run fails. Stops everything it started.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import tempfile
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from steward.canvas.quality import add_counts, quality_report
from steward.commands.setup import print_json, setup
from steward.model.scripted.reading import read
from steward.protocol.box import Box
from steward.room.runtime import RoomRuntime
from steward.service import StewardService, default_runner
from steward.store.embedded import EmbeddedPostgres

if TYPE_CHECKING:  # the tooling is imported inside run_demo, never by the runtime
    from steward_tools.headless.client import HeadlessClient

DEFAULT_PROMPT = "Draw a flow chart of our signup: sign up, verify email, welcome."
DEFAULT_PROJECT = "draw a farm below the flow chart"
# First-run sentences, asked in turn from two tabs looking at different parts of the canvas.
SENTENCES = (
    "add three sticky notes about goals, plans, risks",
    'add a note next to the chart saying "ask legal about GDPR"',
    "draw a cat",
    "make the notes green",
    "what time is it?",
    "erase the arrow",
    "add two boxes labelled 'API' and 'DB'",
    "connect API to DB",
    "draw a house",
    "move the notes left",
)
VIEWS = (Box(x=0, y=0, w=1280, h=800), Box(x=2400, y=-200, w=1000, h=700))


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
    before = set(runtime.mirror.shapes)
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
    # The project's shapes, judged against its tasks' areas and the asker's view.
    made = [i for i in runtime.mirror.shapes if i not in before]
    bounds = [Box(**b) for b in summary.get("task_bounds", [])]
    report = quality_report(
        runtime.mirror.shapes,
        touched=made,
        viewport=clients[0].viewport,
        task_bounds=bounds,
        partial=runtime.mirror.in_flight(),
    )
    return {
        **summary,
        "quality": report.counts(),
        "session_status": status,
        "shapes": len(canvases[0]),
        "canvases_identical": all(c == canvases[0] for c in canvases),
        "mirror_matches_clients": runtime.mirror.shapes == canvases[0],
        "ok": bool(status == "done" and settled and summary["status"] == "done"),
    }


async def _sentence(
    runtime: RoomRuntime,
    clients: list[HeadlessClient],
    asker: HeadlessClient,
    sentence: str,
    timeout: float,
) -> dict[str, Any]:
    """One first-run sentence from one tab: its outcome, quality, and whether it deleted
    anything without being asked to delete or clear."""
    before = set(runtime.mirror.shapes)
    reply = await asker.prompt(sentence)
    if reply.session_id is None:
        return {
            "prompt": sentence,
            "asker": asker.identity,
            "outcome": f"refused: {reply.error}",
            "quality": None,
            "destructive": False,
        }
    sid = reply.session_id
    await asker.wait_status(sid, timeout=timeout)
    done = await runtime.sessions.wait(sid, timeout=10)
    last = runtime.broadcaster.stats(sid).last_seq
    await _wait(lambda: all(c.applied_seq(sid) == last for c in clients), 20)
    removed = len(before - set(runtime.mirror.shapes))
    return {
        "prompt": sentence,
        "asker": asker.identity,
        "outcome": done.outcome,
        "quality": done.summary.get("quality"),
        "removed": removed,
        "destructive": bool(removed and read(sentence).intent not in ("clear", "delete")),
    }


async def run_demo(
    prompt: str = DEFAULT_PROMPT,
    clients_n: int = 3,
    runner: str = "agent",
    timeout: float = 60,
    project: str | None = DEFAULT_PROJECT,
    sentences: tuple[str, ...] = SENTENCES,
) -> dict[str, Any]:
    from steward_tools.headless.client import HeadlessClient
    from steward_tools.livekit_server import LiveKitServer

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
        if runner == "fixed":  # the prompts on the deterministic scripted model, no key needed
            settings = settings.model_copy(update={"steward_model_one_shot": "scripted"})
        service = StewardService(settings, runner=default_runner(settings))
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
        for client, view in zip(clients, VIEWS, strict=False):  # two tabs, two places
            await client.set_view(view)
        await _wait(lambda: all(runtime.views.get(c.identity) for c in clients[:2]), 10)
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
        session_result = await runtime.sessions.wait(sid, timeout=10)
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
            "quality": session_result.summary.get("quality"),
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
        runs = [
            {
                "prompt": prompt,
                "asker": clients[0].identity,
                "outcome": result["outcome"],
                "quality": result["quality"],
                "destructive": False,
            }
        ]
        for i, sentence in enumerate(sentences):
            runs.append(await _sentence(runtime, clients, clients[(i + 1) % 2], sentence, timeout))
        result["runs"] = runs
        result["sessions"] = len(runs)
        if project:
            result["project"] = await _project(service, runtime, clients, project, timeout)
            result["ok"] = bool(result["ok"] and result["project"]["ok"])
        totals: dict[str, int] = {}
        for q in [r["quality"] for r in runs] + [result.get("project", {}).get("quality")]:
            add_counts(totals, q)
        totals["destructive_outside_clear"] = sum(1 for r in runs if r["destructive"])
        result["quality_totals"] = totals
        canvases = [c.shapes for c in clients]
        result["canvases_identical"] = all(c == canvases[0] for c in canvases)
        result["ok"] = bool(
            result["ok"]
            and result["canvases_identical"]
            and all(r["outcome"] == "done" for r in runs)
        )
        if project:
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
    sentences = () if args.no_sentences else SENTENCES
    result = asyncio.run(
        run_demo(args.prompt, args.clients, args.runner, args.timeout, project, sentences)
    )
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
        help="agent: the canvas agent with the configured model; fixed: the canvas agent with the "
        "scripted model (deterministic, no key)",
    )
    p.add_argument("--timeout", type=float, default=60.0)
    p.add_argument("--project", default=DEFAULT_PROJECT, help="the fairy project to run after")
    p.add_argument("--no-project", action="store_true", help="skip the fairy project")
    p.add_argument("--no-sentences", action="store_true", help="skip the first-run sentences")
    p.set_defaults(handler=_run)
