"""`steward bench conformance --json`: every mode answered by a model that knows only the
request, through a real provider (`anthropic:` by default, `openai:` with `--provider openai`)
and a real room.

One steward (real livekit-server, embedded Postgres) serves a room with three headless
clients (the host renders real screenshots). The model is the local Messages (or Chat
Completions) server with `ConformanceModel`: each request is read as a model would read it
(`read_request`), and answered with actions sampled from the request's own response schema
(ids of shapes it was shown, coordinates inside the bounds it was given, random stream
chunkings); the steps that
steer a fairy project (plan, direct, mark done, end) come from `PlanResponder`, also read off
the request, so every role's mode is reached. Prompts rotate over one-shot requests from each
client, `project:` runs, a drone prompted directly, a solo fairy and a duo lead.

Reported: `modes` (requests, sampled outputs, requests without schema / screenshot per mode
and whether the mode may see), `outputs` (sampled actions streamed), `applied` and `refused`
(complete model actions, from `steward_model_actions_total`), `refused_unlogged` (a refusal
with no `action_refused` reason logged), `crashes` (error logs of ours, exceptions around
callbacks, unhandled loop errors, runs ending in `error`), `canvases_identical`,
`task_shapes_outside_bounds` (shapes a fairy created while working a task, outside its task
area, checked right after each round), `requests_without_schema`,
`requests_without_screenshot` (modes that may see only).
Targets: every mode, >= 500 outputs, crashes 0, requests without schema 0,
requests without screenshot 0.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import sys
import time
import uuid
from collections import Counter
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from steward.canvas.bounds import shape_bounds
from steward.commands.setup import print_json
from steward.fairies import modes as fairy_modes
from steward.obs import metrics
from steward.obs.logging import configure_logging
from steward.protocol.box import Box
from steward.protocol.messages import ActionEnvelope
from steward.room.runtime import RoomRuntime
from steward.service import StewardService
from steward.turns.bounds_guard import belongs
from steward_tools.bench.fuzz_live import Observer, observing
from steward_tools.bench.harness import start_stack
from steward_tools.headless.client import HeadlessClient
from steward_tools.livekit_server import LiveKitServer
from steward_tools.rigs.anthropic_server import MessagesServer, Reply
from steward_tools.rigs.clients import canvas_hash
from steward_tools.rigs.openai_server import ChatCompletionsServer
from steward_tools.rigs.request_text import RequestView, read_request
from steward_tools.rigs.responders import (
    PlanResponder,
    SchemaResponder,
    continuation,
    random_chunks,
)
from steward_tools.waiting import bounded, wait_until

TARGET_OUTPUTS = 500
CLIENTS = ("alice", "bob", "carol")
# Fairies added to the room's default crew (an orchestrator and two drones), so the solo and
# duo modes are reached too.
EXTRA_FAIRIES = (("fairy-4", "solo"), ("fairy-5", "duo-orchestrator"))
# What each round prompts: (kind, fairy to address or None).
ROUNDS: tuple[tuple[str, str | None], ...] = (
    ("one-shot", None),
    ("project", None),
    ("one-shot", None),
    ("drone", "fairy-2"),
    ("solo", "fairy-4"),
    ("duo", "fairy-5"),
)


def _steers(name: str) -> bool:
    """Project and task actions steer the fairy flow: the plan gives them, not the sampler."""
    return "project" in name or "task" in name


@dataclass
class ModeTally:
    """Counts for one mode: requests, outputs, and requests that lacked the schema or screenshot."""

    requests: int = 0
    outputs: int = 0
    without_schema: int = 0
    without_screenshot: int = 0


@dataclass
class ConformanceModel:
    """The responder: sampled actions from the request's schema, then the plan's steering."""

    seed: int = 0
    sampled: SchemaResponder = field(default_factory=SchemaResponder)
    plan: PlanResponder = field(default_factory=PlanResponder)
    modes: dict[str, ModeTally] = field(default_factory=dict)
    views: list[RequestView] = field(default_factory=list)

    @property
    def outputs(self) -> int:
        return sum(t.outputs for t in self.modes.values())

    def __call__(self, body: dict[str, Any]) -> Reply:
        view = read_request(body)
        rng = random.Random(f"{self.seed}:{len(self.views)}")
        self.views.append(view)
        sampled = self.sampled.actions(view, rng, skip=_steers)
        steering = [a for a in self.plan.actions(view) if _steers(str(a.get("_type")))]
        tally = self.modes.setdefault(view.mode or "unnamed", ModeTally())
        tally.requests += 1
        tally.outputs += len(sampled)
        tally.without_schema += view.schema is None
        tally.without_screenshot += not view.has_screenshot
        return Reply(random_chunks(continuation(view.prefill, sampled + steering), rng))


def may_see(mode: str) -> bool:
    """Whether the mode table gives the mode a screenshot."""
    return fairy_modes.is_mode(mode) and "screenshot" in fairy_modes.mode(mode).parts


def action_outcomes() -> Counter[str]:
    """Complete model actions by outcome, from the steward's own counter."""
    counter = getattr(metrics, "MODEL_ACTIONS", None)
    out: Counter[str] = Counter()
    for family in counter.collect() if counter is not None else []:
        for s in family.samples:
            if s.name.endswith("_total"):
                out[str(s.labels.get("outcome"))] += int(s.value)
    return out


class _Observer(Observer):
    """Crashes as fuzz_live counts them, plus the reasons logged for refused actions."""

    def __init__(self) -> None:
        super().__init__()
        self.refusal_reasons: Counter[str] = Counter()
        self.refusals_unlogged = 0

    def tap(self, _logger: Any, _name: str, event: MutableMapping[str, Any]) -> Mapping[str, Any]:
        if event.get("event") == "action_refused":
            reason = str(event.get("reason") or "")
            if reason:
                self.refusal_reasons[reason.split(":")[0][:60]] += 1
            else:
                self.refusals_unlogged += 1
        return super().tap(_logger, _name, event)


def _shape(sid: str, x: float, y: float, text: str) -> dict[str, Any]:
    return {
        "id": sid,
        "type": "geo",
        "x": x,
        "y": y,
        "rotation": 0,
        "props": {"geo": "rectangle", "w": 180, "h": 90, "text": text, "color": "black"},
    }


async def _idle(
    service: StewardService, runtime: RoomRuntime, clients: list[HeadlessClient]
) -> None:
    """No fairy working, nothing unacked, every client equal to the room's canvas."""
    fairies = service.fairies
    room = fairies.rooms.get(runtime.room_id) if fairies is not None else None
    await wait_until(
        lambda: (
            (room is None or not room.working())
            and runtime.broadcaster.total_unacked() == 0
            and all(c.shapes == runtime.mirror.shapes for c in clients)
        ),
        60,
        "the room settling",
    )


async def _outside_bounds(
    service: StewardService, runtime: RoomRuntime, since: int, tasks_before: set[str]
) -> tuple[int, int, int]:
    """After a fairy round: shapes that fairies created while working this round's tasks and
    that lie outside their task areas. Returns (rows read, shapes checked, outside)."""
    fairies = service.fairies
    room = fairies.rooms.get(runtime.room_id) if fairies is not None else None
    rows = await runtime.deps.outbox.room_history(runtime.room_id)
    if room is None:
        return len(rows), 0, 0
    areas: dict[str, list[Box]] = {}
    for task in room.board.tasks.values():
        if task.id not in tasks_before and task.assigned_to and task.bounds is not None:
            areas.setdefault(task.assigned_to, []).append(task.bounds)
    shapes = runtime.mirror.shapes
    checked = outside = 0
    for row in rows[since:]:
        worker = runtime.sessions.fairy_of(row.session_id)
        worker = worker if worker in areas else None
        if worker is None or row.partial:
            continue
        env = ActionEnvelope.model_validate_json(row.payload)
        for action in env.actions:
            sid = action.params.get("id") if action.name == "create_shape" else None
            if not isinstance(sid, str) or sid not in shapes:
                continue
            checked += 1
            box = shape_bounds(shapes[sid], shapes)
            outside += not any(belongs(box, area) for area in areas[worker])
    return len(rows), checked, outside


async def exercise(
    service: StewardService,
    lk: LiveKitServer,
    model: ConformanceModel,
    target: int,
    max_rounds: int = 400,
    progress: bool = False,
) -> dict[str, Any]:
    """Rounds of prompts in a fresh room of a started steward whose model is `model` behind
    the local Messages server, until `target` sampled outputs were streamed."""
    observer = _Observer()
    before = action_outcomes()
    clients: list[HeadlessClient] = []
    statuses: Counter[str] = Counter()
    rounds = 0
    in_bounds_checked = outside_bounds = 0
    canvases_identical = False
    started = time.monotonic()
    try:
        with observing(observer):
            name = f"bench-conformance-{uuid.uuid4().hex[:6]}"
            runtime = await service.join(name)
            for ident in CLIENTS:
                client = HeadlessClient.create(
                    lk.url, lk.api_key, lk.api_secret, room=name, identity=ident
                )
                await client.connect()
                clients.append(client)
            await wait_until(lambda: all(runtime.participants.get(i) for i in CLIENTS), 20, "join")
            fairies = service.fairies
            if fairies is not None:
                crew = await fairies.room(name)
                for fid, role in EXTRA_FAIRIES:
                    crew.roster.add(fid, role=role)  # type: ignore[arg-type]
            await clients[0].edit(
                put=[_shape(f"seed-{i}", 120 + 260 * i, 140, f"seed {i}") for i in range(3)]
            )
            await wait_until(lambda: all(len(c.shapes) == 3 for c in clients), 20, "seed shapes")
            while model.outputs < target and rounds < max_rounds:
                kind, fairy = ROUNDS[rounds % len(ROUNDS)]
                client = clients[rounds % len(clients)]
                text = f"round {rounds}: draw something"
                message = f"project: {text}" if kind == "project" else text
                room = fairies.rooms.get(name) if fairies is not None else None
                tasks_before = set(room.board.tasks) if room is not None else set()
                seen = len(await runtime.deps.outbox.room_history(name))
                reply = await client.prompt(message, **({"fairy": fairy} if fairy else {}))
                rounds += 1
                if not reply.session_id:
                    statuses[f"refused: {reply.error}"[:80]] += 1
                    continue
                status = await client.wait_status(reply.session_id, timeout=120)
                statuses[status] += 1
                if progress:
                    took = time.monotonic() - started
                    print(
                        f"round {rounds} {kind}: {status} at {took:.1f}s, {model.outputs} outputs",
                        file=sys.stderr,
                    )
                await _idle(service, runtime, clients)
                # Right after the round: a later round may move what the fairies drew.
                _, checked, outside = await _outside_bounds(service, runtime, seen, tasks_before)
                in_bounds_checked += checked
                outside_bounds += outside
            await _idle(service, runtime, clients)
            hashes = {canvas_hash(c.shapes) for c in clients}
            canvases_identical = len(hashes) == 1 and clients[0].shapes == runtime.mirror.shapes
    finally:
        for c in clients:
            with contextlib.suppress(Exception):
                await c.disconnect()
    after = action_outcomes()
    seeing = {m for m in model.modes if may_see(m)}
    crashes = [*observer.crashes, *(f"run ended {s}" for s in statuses if s == "error")]
    per_mode = {
        m: {
            "requests": t.requests,
            "outputs": t.outputs,
            "may_see": m in seeing,
            "without_schema": t.without_schema,
            "without_screenshot": t.without_screenshot,
        }
        for m, t in sorted(model.modes.items())
    }
    return {
        "modes": per_mode,
        "outputs": model.outputs,
        "applied": after["applied"] - before["applied"],
        "refused": after["refused"] - before["refused"],
        "refused_unlogged": observer.refusals_unlogged,
        "refusal_reasons": dict(observer.refusal_reasons.most_common(12)),
        "crashes": len(crashes),
        "crash_samples": crashes[:5],
        "canvases_identical": canvases_identical,
        "task_shapes_checked": in_bounds_checked,
        "task_shapes_outside_bounds": outside_bounds,
        "requests_without_schema": sum(t.without_schema for t in model.modes.values()),
        "requests_without_screenshot": sum(
            t.without_screenshot for m, t in model.modes.items() if m in seeing
        ),
        "requests": len(model.views),
        "rounds": rounds,
        "statuses": dict(statuses),
        "seconds": round(time.monotonic() - started, 1),
        "seed": model.seed,
    }


def model_server(provider: str, model: ConformanceModel) -> MessagesServer | ChatCompletionsServer:
    """A local server answering with `model` in `provider`'s protocol."""
    return ChatCompletionsServer(model) if provider == "openai" else MessagesServer(model)


def model_settings(provider: str, base_url: str) -> dict[str, Any]:
    """The settings that make the steward's model the local server at `base_url`."""
    if provider == "openai":
        return {"steward_model": "openai:conformance", "openai_base_url": base_url}
    return {"steward_model": "anthropic:claude-conformance", "anthropic_base_url": base_url}


async def run(
    seed: int, target: int, progress: bool = False, provider: str = "anthropic"
) -> dict[str, Any]:
    model = ConformanceModel(seed=seed)
    server = model_server(provider, model)
    settings = model_settings(provider, await server.start())
    try:
        stack = await start_stack(**settings, steward_context_timeout_s=3.0)
        try:
            result = await exercise(stack.service, stack.server, model, target, progress=progress)
            return {**result, "provider": provider}
        finally:
            await stack.close()
    finally:
        await server.stop()


def _handler(args: argparse.Namespace) -> int:
    configure_logging("error", "json")
    work = run(args.seed, args.outputs, args.progress, args.provider)
    result = asyncio.run(bounded(work, args.timeout, "conformance"))
    print_json(result)
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "conformance", help="every mode answered from its own request's schema, in a real room"
    )
    p.add_argument("--json", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--outputs", type=int, default=TARGET_OUTPUTS, help="sampled actions to reach")
    p.add_argument("--timeout", type=float, default=1500.0)
    p.add_argument("--progress", action="store_true", help="a line per round on stderr")
    p.add_argument(
        "--provider",
        choices=("anthropic", "openai"),
        default="anthropic",
        help="the protocol the local model server speaks (Messages or Chat Completions)",
    )
    p.set_defaults(handler=_handler)
