"""`steward bench faults`: delivery under faults; lost, duplicated, out-of-order must be 0.

The steward runs as a child process (`steward join ROOM`) so it can be killed with SIGKILL
and restarted; LiveKit, an embedded Postgres (which is stopped and started mid-run) and the
clients run here. Every run goes through these steps, one prompt each:
1. lossy clients (dropped, duplicated, reordered envelopes; lost acks) and a forced full
   reconnect of one client mid-stream;
2. the host leaves mid-stream and a fresh browser joins late;
3. the steward is killed with SIGKILL mid-stream and started again;
4. Postgres is stopped and started mid-stream.
The lossy client and the late joiners apply envelopes with the browser's own executor (the
bridge's TypeScript `Executor` over a tldraw store, `executor_client.py`); the others are
headless clients applying with the steward's `CanvasMirror`.

After each step every prompt's request must end `done` (and its last model run with it),
and every client must hold every final action of the durable outbox with a canvas equal to
the mirror rebuilt from the outbox (what a restarted steward uses): the headless clients
exactly, the executor clients' tldraw pages under the parity rules. A step that misses any
of it is a failed step. `lost` counts, per client, the actions the steward streamed (every
action id any client received, previews included, and every action in the outbox) whose
final version that client never applied: an action the model produced that a kill
stranded as a preview counts, not only outbox rows.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
from livekit import rtc

from steward.canvas.mirror import CanvasMirror
from steward.commands.setup import print_json
from steward.config import DEV_API_SECRET
from steward.obs.logging import configure_logging, get_logger
from steward.protocol.messages import ActionEnvelope, WireAction
from steward.room.outbound.envelopes import FragmentAssembler, is_fragment
from steward.room.runs.sessions import INTERRUPTED
from steward.store.embedded import EmbeddedPostgres
from steward_tools.child_process import run_until_signalled, tied_to_parent
from steward_tools.headless.client import Faults
from steward_tools.livekit_server import LiveKitServer
from steward_tools.rigs.clients import TimedClient
from steward_tools.rigs.executor_client import ExecutorClient, page_disagreements
from steward_tools.waiting import bounded

log = get_logger(__name__)

LOSSY = Faults(drop_every=5, duplicate_every=7, reorder_every=6, drop_ack_every=4)
STEPS = ("lossy+reconnect", "host_leaves", "steward_sigkill", "postgres_restart")
# The long mode: at least this many actions through every fault, within this time.
LONG_ACTIONS = 10_000
LONG_MINUTES = 30.0
FLOW_CHART = "draw a flow chart of our signup"
# The long mode sends these at every step, so each fault lands on several runs at once.
LONG_PROMPTS = (
    FLOW_CHART,
    "add 12 sticky notes about goals",
    "draw 12 blue circles in a row",
)
# In the long mode every client without faults prompts at every step (one asker's prompts
# queue, different askers' run at once), the model streams faster, and a room goes through
# the faults this many times: more actions cross each fault per second, the faults the same.
# At 1,000 tokens/s a step's first prompts still stream for 1.5-2 s, so each fault (0.6 s
# after the prompts) still lands mid-stream.
LONG_TOKENS_PER_S = 1000.0
LONG_CYCLES = 2


@dataclass
class Tally:
    """What the faults bench counted: runs, steps, actions, and the lost, duplicated and
    out-of-order ones."""

    runs: int = 0
    steps: int = 0
    failed_steps: int = 0
    actions: int = 0
    lost: int = 0
    duplicated: int = 0
    out_of_order: int = 0
    canvases_identical: bool = True
    # The clients applying with the bridge's executor: how many, and whether each agreed
    # with the outbox mirror after every step.
    executor_clients: int = 0
    executor_steps_compared: int = 0
    executor_identical: bool = True
    # The prompts' model runs: how many, how each ended ('running': not within the bound),
    # and how many a SIGKILL interrupted (asked again; the second run counts too).
    prompts: int = 0
    runs_done: int = 0
    run_outcomes: Counter[str] = field(default_factory=Counter)
    interrupted_by_kill: int = 0
    notes: list[str] = field(default_factory=list)


class Steward:
    """The steward as a child process: start, SIGKILL, start again."""

    def __init__(self, env: dict[str, str], room: str) -> None:
        self.env, self.room = env, room
        self.starts = 0
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        exe = Path(sys.executable).with_name("steward")
        # STEWARD_FAULTS_LOG_DIR keeps each steward's log (to find why a run failed).
        log_dir = os.environ.get("STEWARD_FAULTS_LOG_DIR")
        stderr: Any = asyncio.subprocess.DEVNULL
        if log_dir:
            self.starts += 1
            stderr = open(Path(log_dir) / f"{self.room}-{self.starts}.log", "wb")  # noqa: ASYNC230
        # Tied: a bench killed by a signal leaves no steward behind holding the room.
        self.proc = await asyncio.create_subprocess_exec(
            *tied_to_parent([str(exe), "join", self.room, "--no-http"]),
            env=self.env,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
        )
        if log_dir:
            stderr.close()  # the child has its own copy
        assert self.proc.stdout is not None
        line = await bounded(self.proc.stdout.readline(), 60, "steward start")
        if b"serving" not in line:
            raise RuntimeError(f"steward did not start: {line!r}")

    async def kill(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            await self.proc.wait()

    async def stop(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), 15)
            except TimeoutError:
                await self.kill()


async def outbox_state(db_url: str, room: str) -> tuple[set[str], dict[str, Any]]:
    """Final action ids in the outbox, and the canvas rebuilt from it (the durable mirror).
    LAST_OUTBOX_IDS then holds every action id of the room's outbox (previews included)."""
    conn = await asyncpg.connect(db_url)
    try:
        rows = await conn.fetch(
            "SELECT payload::text AS payload FROM outbox WHERE room_id = $1 ORDER BY room_order",
            room,
        )
    finally:
        await conn.close()
    LAST_OUTBOX_IDS.clear()  # this room's only
    replica, assembler, finals = CanvasMirror(), FragmentAssembler(), set()
    maxseq: dict[str, int] = {}
    seqs: dict[str, list[int]] = {}
    writers: dict[str, list[str]] = {}
    for row in rows:
        env = ActionEnvelope.model_validate_json(row["payload"])
        maxseq[env.session_id] = max(maxseq.get(env.session_id, 0), env.seq)
        seqs.setdefault(env.session_id, []).append(env.seq)
        for action in env.actions:
            LAST_OUTBOX_IDS.add(action.id)
            if not env.partial:
                finals.add(action.id)
            if is_fragment(action.params):
                params = assembler.add(action.id, action.params)
                if params is None:
                    continue
                action = WireAction(id=action.id, name=action.name, params=params)
            replica.apply_one(action, partial=bool(env.partial), session=env.session_id)
            shape_id = action.params.get("id")
            if not env.partial and isinstance(shape_id, str):
                writers.setdefault(shape_id, []).append(f"{env.session_id}:{env.seq}")
    LAST_OUTBOX_SEQS.clear()
    LAST_OUTBOX_SEQS.update(maxseq)
    LAST_OUTBOX_ROWS.clear()
    LAST_OUTBOX_ROWS.update(seqs)
    LAST_WRITERS.clear()
    LAST_WRITERS.update(writers)
    return finals, replica.shapes


LAST_OUTBOX_SEQS: dict[str, int] = {}  # for the diagnostic when a canvas differs
LAST_OUTBOX_ROWS: dict[str, list[int]] = {}
LAST_WRITERS: dict[str, list[str]] = {}  # shape id → the final envelopes that wrote it
LAST_OUTBOX_IDS: set[str] = set()  # every action id in the outbox, previews included


def _canvas_diff(c: TimedClient, mirror: dict[str, Any]) -> dict[str, Any]:
    """Where a client's canvas and the outbox mirror part, and the client's ordering state."""
    differ = sorted(k for k in set(c.shapes) & set(mirror) if c.shapes[k] != mirror[k])
    held = c.order.held_seqs()
    return {
        "client": c.identity,
        "only_client": sorted(set(c.shapes) - set(mirror))[:5],
        "only_mirror": sorted(set(mirror) - set(c.shapes))[:5],
        "differ": differ[:5],
        "sample": [(c.shapes[k], mirror[k]) for k in differ[:2]],
        "applied_seqs": c.order.sessions(),
        "outbox_seqs": dict(LAST_OUTBOX_SEQS),
        "outbox_rows_of_held": {sid: LAST_OUTBOX_ROWS.get(sid) for sid in held},
        "held": held,
        "stats": str(c.stats),
        "writers": {k: LAST_WRITERS.get(k) for k in differ[:5]},
    }


async def client_differences(c: TimedClient, finals: set[str], mirror: dict[str, Any]) -> str:
    """How one client is behind the outbox ('' when it holds it): finals not applied, and
    shapes that differ (with the outbox envelopes that wrote them, to tell a lost update
    from two writers). An executor client's tldraw page is read now and compared under the
    parity rules."""
    missing = len(finals - set(c.applied_at))
    if isinstance(c, ExecutorClient):
        problems = page_disagreements(await c.refresh(), list(mirror.values()))
        shown = "; ".join(problems[:2])
        differ = len(problems)
    else:
        keys = sorted(k for k in set(c.shapes) | set(mirror) if c.shapes.get(k) != mirror.get(k))
        shown = ", ".join(f"{k} by {LAST_WRITERS.get(k)}" for k in keys[:2])
        differ = len(keys)
    if not missing and not differ:
        return ""
    return f"{c.identity}: {missing} finals missing, {differ} differ {shown}"


async def lag_after(
    clients: list[TimedClient], db_url: str, room: str, timeout: float
) -> str | None:
    """None once every client holds the outbox's state; else, after `timeout`, how they
    still differ from it."""
    deadline = time.monotonic() + timeout
    last = "outbox unreadable"
    while time.monotonic() < deadline:
        try:
            finals, mirror = await outbox_state(db_url, room)
        except (OSError, asyncpg.PostgresError):  # Postgres may be coming back
            await asyncio.sleep(0.25)
            continue
        # Every final applied, and the canvas equal to the outbox's: a trailing partial
        # preview can still be on its way (a retransmit) after the finals arrived.
        parts = [d for c in clients if (d := await client_differences(c, finals, mirror))]
        if not parts:
            return None
        last = "; ".join(parts)
        await asyncio.sleep(0.25)
    return last


async def converged(clients: list[TimedClient], db_url: str, room: str, timeout: float) -> bool:
    return await lag_after(clients, db_url, room, timeout) is None


async def _read(db_url: str, query: str, *args: Any) -> list[asyncpg.Record]:
    """One query, retried while Postgres comes back (bounded by the callers' waits)."""
    while True:
        try:
            conn = await asyncpg.connect(db_url)
            try:
                rows: list[asyncpg.Record] = await conn.fetch(query, *args)
                return rows
            finally:
                await conn.close()
        except (OSError, asyncpg.CannotConnectNowError, asyncpg.ConnectionDoesNotExistError):
            await asyncio.sleep(0.25)


async def runs_ended(db_url: str, session_ids: list[str], timeout: float) -> dict[str, str]:
    """Wait (bounded) until these model runs have ended; each one's outcome ('running' when
    it had not ended by `timeout`, 'missing' when Postgres never heard of it)."""
    deadline = time.monotonic() + timeout
    query = "SELECT session_id, status, outcome FROM agent_sessions WHERE session_id = ANY($1)"
    while True:
        rows = await bounded(_read(db_url, query, session_ids), timeout, "reading runs")
        found = {str(r["session_id"]): r for r in rows}
        outcomes = {
            sid: "missing"
            if (r := found.get(sid)) is None
            else "running"
            if r["status"] == "running"
            else str(r["outcome"] or r["status"])
            for sid in session_ids
        }
        if "running" not in outcomes.values() or time.monotonic() > deadline:
            return outcomes
        await asyncio.sleep(0.25)


async def prompt_retrying(prompter: TimedClient, message: str = FLOW_CHART) -> Any:
    """Prompt; a participant the steward has not seen yet (joins are announced in batches,
    and a restarted steward relearns the room; a steward just joined may not answer RPCs
    yet, and one restarted under load takes a while to answer) is retried for a while."""
    deadline = time.monotonic() + 30
    while True:
        try:
            reply = await prompter.prompt(message)
        except rtc.RpcError as err:
            if time.monotonic() > deadline:
                raise
            log.info("prompt_rpc_retried", client=prompter.identity, error=err.message)
        else:
            if reply.session_id is not None or time.monotonic() > deadline:
                return reply
        await asyncio.sleep(0.25)


async def one_run(
    server: LiveKitServer,
    pg: EmbeddedPostgres,
    db_url: str,
    tally: Tally,
    *,
    steps: tuple[str, ...] = STEPS,
    tokens_per_s: float = 150.0,
    prompts: tuple[str, ...] = (FLOW_CHART,),
    every_client_prompts: bool = False,
) -> None:
    room = f"bench-faults-{uuid.uuid4().hex[:6]}"
    env = {
        **os.environ,
        "LIVEKIT_URL": server.url,
        "LIVEKIT_API_KEY": server.api_key,
        "LIVEKIT_API_SECRET": server.api_secret or DEV_API_SECRET,
        "DATABASE_URL": db_url,
        "STEWARD_SCRIPTED_TOKENS_PER_S": str(tokens_per_s),
        "STEWARD_LOG_LEVEL": "error",
        "STEWARD_LOG_FORMAT": "json",
        "STEWARD_RETRANSMIT_AFTER_MS": "150",
    }
    if os.environ.get("STEWARD_FAULTS_LOG_DIR"):
        env["STEWARD_LOG_LEVEL"] = "info"
    steward = Steward(env, room)
    await steward.start()
    clients: list[TimedClient] = []
    gone: list[TimedClient] = []
    streamed: set[str] = set()  # every action id any client received, previews included

    async def client(identity: str, faults: Faults | None = None) -> TimedClient:
        # The lossy client and late joiners apply with the browser's own executor.
        kind = ExecutorClient if faults == LOSSY or identity.startswith("late") else TimedClient
        made = kind.create(
            server.url,
            server.api_key,
            server.api_secret,
            room=room,
            identity=identity,
            faults=faults,
        )
        assert isinstance(made, TimedClient)
        made.on_arrival = lambda env: streamed.update(a.id for a in env.actions)
        if isinstance(made, ExecutorClient):
            tally.executor_clients += 1
        await made.connect()
        return made

    try:
        # The long mode adds a second prompter (c3): the host leaves once per cycle, and the
        # earliest joined (c0, then c1) is the host.
        for i in range(4 if every_client_prompts else 3):
            clients.append(await client(f"c{i}", LOSSY if i == 2 else None))
        prompter = clients[1]

        async def send(asker: TimedClient) -> list[tuple[TimedClient, str]]:
            sent = []
            for message in prompts:  # one asker's prompts queue behind each other
                reply = await prompt_retrying(asker, message)
                if reply.session_id is None:
                    tally.notes.append(f"{step}: prompt refused: {reply.error}")
                else:
                    sent.append((asker, reply.session_id))
            return sent

        for step in steps:
            tally.steps += 1
            failed = len(tally.notes)
            # The lossy client never prompts (its RPCs are at the mercy of its own faults), nor
            # do late joiners (a reconnect under load gives one a new session, whose grant
            # the steward rightly refuses: its retries would only mute it).
            askers = [c for c in clients if c.faults != LOSSY and c.identity.startswith("c")]
            if not every_client_prompts:
                askers = [prompter]
            sessions = [s for sent in await asyncio.gather(*map(send, askers)) for s in sent]
            tally.prompts += len(sessions)
            if not sessions:
                tally.failed_steps += 1
                tally.notes.append(f"{step}: no prompt accepted")
                continue
            await asyncio.sleep(0.6)  # mid-stream
            if step == "lossy+reconnect":
                # The lossy client (its place in the list moves once the host has left).
                await next(c for c in clients if c.faults == LOSSY).simulate_full_reconnect()
            elif step == "host_leaves":
                host = clients.pop(0)
                await host.disconnect()
                gone.append(host)
                clients.append(await client(f"late{len(gone)}" if len(gone) > 1 else "late"))
            elif step == "steward_sigkill":
                await steward.kill()
                await asyncio.sleep(0.5)
                await steward.start()
            elif step == "postgres_restart":
                await asyncio.to_thread(pg.stop)
                await asyncio.sleep(0.5)
                await pg.astart()
            # Every prompt's run ends `done`, bounded: a run still going after the bound,
            # or ending any other way, fails the step. The one exception is what a SIGKILL
            # does by design: a one-shot run the dead steward left is ended `interrupted`
            # by the restarted one (its previews withdrawn), never re-run; the asker asks
            # again, and that run must end `done`.
            outcomes = await runs_ended(db_url, [sid for _, sid in sessions], 90)
            for asker, sid in sessions:
                outcome = outcomes[sid]
                tally.run_outcomes[outcome] += 1
                if outcome == INTERRUPTED and step == "steward_sigkill":
                    tally.interrupted_by_kill += 1
                    again = await prompt_retrying(asker if asker in clients else clients[0])
                    if again.session_id is None:
                        tally.notes.append(f"{step}: asking again refused: {again.error}")
                        continue
                    outcome = (await runs_ended(db_url, [again.session_id], 90))[again.session_id]
                    tally.run_outcomes[outcome] += 1
                    tally.prompts += 1
                if outcome == "done":
                    tally.runs_done += 1
                else:
                    tally.notes.append(f"{step}: run {sid} ended {outcome}")
            lagging = await lag_after(clients, db_url, room, 30)
            if lagging is not None:
                tally.notes.append(f"{step}: clients did not converge within 30 s: {lagging}")
                if any(
                    lagging.startswith(f"{c.identity}:") or f"; {c.identity}:" in lagging
                    for c in clients
                    if isinstance(c, ExecutorClient)
                ):
                    tally.executor_identical = False
            tally.executor_steps_compared += sum(isinstance(c, ExecutorClient) for c in clients)
            if len(tally.notes) > failed:
                tally.failed_steps += 1
        finals, mirror = await outbox_state(db_url, room)
        streamed |= LAST_OUTBOX_IDS
        tally.actions += len(finals)
        for c in clients:
            tally.lost += len(streamed - set(c.applied_at))
            tally.duplicated += c.stats.duplicates_applied
            tally.out_of_order += c.stats.out_of_order_applied
            if await client_differences(c, finals, mirror):
                tally.canvases_identical = False
                if isinstance(c, ExecutorClient):
                    tally.executor_identical = False
                tally.notes.append(f"{c.identity}: canvas differs from the outbox mirror")
                log.warning("fault_canvas_differs", **_canvas_diff(c, mirror))
        tally.runs += 1
    finally:
        for c in clients + gone:
            with contextlib.suppress(Exception):
                await c.disconnect()
        await steward.stop()


async def run(runs: int = 2, *, actions: int = 0, minutes: float = 0.0) -> dict[str, Any]:
    """`runs` runs, or (with `actions`) runs until that many actions went through every
    fault, within `minutes`: the long mode, which no CI runs."""
    server = await LiveKitServer().astart()
    tmp = tempfile.TemporaryDirectory(prefix="steward-faults-pg-")
    pg = EmbeddedPostgres(Path(tmp.name))
    tally = Tally()
    started = time.monotonic()
    deadline = started + minutes * 60
    try:
        db_url = await pg.astart()
        if actions:
            runs = 0
            while tally.actions < actions and time.monotonic() < deadline:
                runs += 1
                await one_run(
                    server,
                    pg,
                    db_url,
                    tally,
                    steps=STEPS * LONG_CYCLES,
                    tokens_per_s=LONG_TOKENS_PER_S,
                    prompts=LONG_PROMPTS,
                    every_client_prompts=True,
                )
        else:
            for _ in range(runs):
                await one_run(server, pg, db_url, tally)
    finally:
        pg.stop()
        tmp.cleanup()
        server.stop()
    return {
        "runs": tally.runs,
        "steps": tally.steps,
        "actions": tally.actions,
        "failed_steps": tally.failed_steps,
        "model_runs": {
            "started": tally.prompts,
            "ended": dict(tally.run_outcomes.most_common()),
            "done": tally.runs_done,
            "interrupted_by_sigkill_then_asked_again": tally.interrupted_by_kill,
        },
        "lost": tally.lost,
        "duplicated": tally.duplicated,
        "out_of_order": tally.out_of_order,
        "canvases_identical": tally.canvases_identical,
        "executor_clients": tally.executor_clients,
        "executor_steps_compared": tally.executor_steps_compared,
        "executor_identical_to_outbox": tally.executor_identical,
        "faults": list(STEPS),
        "notes": tally.notes[:20],
        "seconds": round(time.monotonic() - started, 1),
        "target_actions": actions,
        "ok": tally.runs == runs
        and tally.actions >= max(actions, 1)
        and not tally.notes
        and tally.failed_steps == 0
        and tally.runs_done == tally.prompts - tally.interrupted_by_kill
        and tally.lost == tally.duplicated == tally.out_of_order == 0
        and tally.canvases_identical
        and tally.executor_clients > 0
        and tally.executor_identical,
    }


def _handler(args: argparse.Namespace) -> int:
    configure_logging("error", "json")
    if args.long:
        args.actions, args.minutes = args.actions or LONG_ACTIONS, args.minutes or LONG_MINUTES
    if args.actions:
        work = run(actions=args.actions, minutes=args.minutes or LONG_MINUTES)
        # The last run starts before the deadline and may take its whole bound.
        limit = 60 + (args.minutes or LONG_MINUTES) * 60 + 240
    else:
        work, limit = run(args.runs), 60 + args.runs * 240
    result = run_until_signalled(lambda: bounded(work, limit, "faults"))
    print_json(result)
    return 0 if result["ok"] else 1


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("faults", help="delivery under drops, reconnects, kills and restarts")
    p.add_argument("--json", action="store_true")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--actions", type=int, default=0, help="run until this many actions")
    p.add_argument("--minutes", type=float, default=0.0, help="time limit with --actions")
    p.add_argument(
        "--long",
        action="store_true",
        help=f"--actions {LONG_ACTIONS} --minutes {LONG_MINUTES:g} (not for CI)",
    )
    p.set_defaults(handler=_handler)
