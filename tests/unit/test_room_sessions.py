"""One registry for every run in a room: a prompted run and a fairy's own run are opened,
listed, owned, cancelled and ended through the same calls, with one id scheme, one final
status each and one `session_ended` line each."""

from __future__ import annotations

import asyncio
import re
from typing import Any, cast

import structlog

from steward.canvas.mirror import CanvasMirror
from steward.ports import PromptInput, SessionPort
from steward.protocol.messages import StatusMessage, WireAction
from steward.protocol.names import TOPIC_STATUS
from steward.room.context.snapshot_fetcher import SnapshotFetcher
from steward.room.outbound.broadcaster import Broadcaster
from steward.room.outbound.delivery.stats import StreamStats
from steward.room.outbound.messenger import Messenger
from steward.room.runs.sessions import RoomSessions, SessionsByRoom
from steward.store.outbox import Outbox


class Wire:
    """The broadcaster's and the outbox's side of the room: what was sent and written."""

    def __init__(self) -> None:
        self.mirror = CanvasMirror()
        self.sent: list[tuple[str, list[WireAction]]] = []
        self.rows: dict[str, str] = {}  # session id -> its status in `agent_sessions`
        self.packets: list[tuple[bytes, str]] = []

    # -- Broadcaster ---------------------------------------------------------------------
    def new_session(self, session_id: str) -> None:
        pass

    def stats(self, session_id: str) -> StreamStats:
        return StreamStats()

    def unacked_in(self, session_id: str) -> int:
        return 0

    async def last_seq(self, session_id: str) -> int:
        return 0

    async def send(self, session_id: str, actions: list[WireAction], **_: Any) -> int:
        self.sent.append((session_id, actions))
        for a in actions:
            self.mirror.apply_one(a, partial=False, session=session_id)
        return len(self.sent)

    # -- Outbox --------------------------------------------------------------------------
    async def start_session(self, *, session_id: str, **_: Any) -> None:
        self.rows[session_id] = "running"

    async def end_session(self, session_id: str, status: str, outcome: str) -> None:
        self.rows[session_id] = status

    # -- Messenger's publish -------------------------------------------------------------
    async def publish(
        self, payload: bytes, topic: str, destinations: list[str] | None = None
    ) -> None:
        self.packets.append((payload, topic))

    def statuses(self, session_id: str) -> list[str]:
        out: list[str] = []
        for payload, topic in self.packets:
            if topic == TOPIC_STATUS:
                msg = StatusMessage.model_validate_json(payload)
                if msg.session_id == session_id:
                    out.append(msg.status)
        return out


class Desk:
    """The fairy runtime as the registry sees it: fairy-2 works for bob and may be stopped."""

    def __init__(self) -> None:
        self.stopped: list[str] = []

    def asker_of(self, room_id: str, fairy_id: str) -> str | None:
        return "bob" if fairy_id == "fairy-2" else None

    def mode_of(self, room_id: str, fairy_id: str) -> str | None:
        return "working-drone"

    def stop(self, room_id: str, fairy_id: str) -> bool:
        self.stopped.append(fairy_id)
        return True


class UntilCancelled:
    """A runner whose run goes on until it is cancelled."""

    def __init__(self) -> None:
        self.started = asyncio.Event()

    async def run(self, session: SessionPort, prompt: PromptInput) -> str:
        self.started.set()
        await asyncio.Event().wait()
        return "done"


def _registry(wire: Wire, runner: Any, fairies: Any = None) -> RoomSessions:
    """The room's registry over `wire` (its broadcaster, messenger and outbox)."""
    return RoomSessions(
        "room",
        runner,
        broadcaster=cast(Broadcaster, wire),
        messenger=Messenger("room", wire.publish),
        snapshots=cast(SnapshotFetcher, None),
        outbox=cast(Outbox, wire),
        model="m",
        **({"fairies": fairies} if fairies is not None else {}),
    )


async def test_a_prompted_and_a_fairy_run_share_one_registry() -> None:
    wire, desk, runner = Wire(), Desk(), UntilCancelled()
    registry = _registry(wire, lambda: runner, fairies=desk)
    factory = SessionsByRoom(lambda room_id: registry if room_id == "room" else None)
    prompted = await registry.start(PromptInput(message="a box", source="browser", requester="ann"))
    drone = await factory.open_session("room", "fairy-2")
    fairy_run = drone.session_id
    await asyncio.wait_for(runner.started.wait(), 5)  # the prompted run is going
    # One id scheme.
    assert all(re.fullmatch(r"s-[0-9a-f]{16}", sid) for sid in (prompted, fairy_run))
    # One listing, one owner call, one kind of record.
    listed = {v["session_id"]: v for v in registry.overview()}
    assert set(listed) == {prompted, fairy_run}
    assert (listed[prompted]["fairy"], listed[fairy_run]["fairy"]) == (None, "fairy-2")
    assert listed[fairy_run]["mode"] == "working-drone"
    assert (registry.owner(prompted), registry.owner(fairy_run)) == ("ann", "bob")
    assert registry.fairy_of(fairy_run) == "fairy-2" and registry.fairy_of(prompted) is None
    # A preview the drone left in flight.
    box = {"id": "box", "type": "geo", "x": 0, "y": 0, "props": {"w": 10, "h": 10}}
    wire.mirror.apply_one(
        WireAction(id="a1", name="create_shape", params=box), partial=True, session=fairy_run
    )

    with structlog.testing.capture_logs() as logs:
        # One cancel call for both: the fairy decides about its own run, the task is stopped.
        assert registry.cancel(fairy_run, "bob") and desk.stopped == ["fairy-2"]
        assert registry.cancel(prompted, "ann")
        result = await registry.wait(prompted, timeout=5)
        await factory.close_session(drone, "canceled")
        await factory.close_session(drone, "done")  # a second close ends nothing twice

    assert result.outcome == "canceled"
    assert registry.overview() == [] and not registry.cancel(prompted, "ann")
    # The fairy's half-drawn preview was withdrawn in its own run, the one way.
    assert [(sid, [a.id for a in acts]) for sid, acts in wire.sent] == [(fairy_run, ["a1"])]
    assert not wire.mirror.in_flight()
    # One final status each, sent once; both rows closed.
    assert wire.statuses(prompted)[-1:] == ["canceled"]
    assert wire.statuses(prompted).count("canceled") == 1
    assert wire.statuses(fairy_run) == ["done"]
    assert wire.rows == {prompted: "canceled", fairy_run: "done"}
    # One end line per run, with one set of fields, told apart by kind.
    ended = [e for e in logs if e["event"] == "session_ended"]
    assert {e["session_id"]: e["kind"] for e in ended} == {prompted: "prompt", fairy_run: "fairy"}
    assert len(ended) == 2
    assert set(ended[0]) - {"usage_error"} == set(ended[1]) - {"usage_error"}
    for field in ("room", "outcome", "envelopes", "actions", "quality", "fairy"):
        assert all(field in e for e in ended), field
    cancels = [
        (e["session_id"], e["owner"], e["ok"]) for e in logs if e["event"] == "session_cancel"
    ]
    assert cancels == [(fairy_run, "bob", True), (prompted, "ann", True)]


async def test_a_fairy_run_reopened_after_a_restart_withdraws_what_it_left() -> None:
    wire = Wire()
    registry = _registry(wire, UntilCancelled)
    box = {"id": "box", "type": "geo", "x": 0, "y": 0, "props": {"w": 10, "h": 10}}
    wire.mirror.apply_one(
        WireAction(id="a1", name="create_shape", params=box), partial=True, session="s-dead"
    )
    factory = SessionsByRoom(lambda room_id: registry)
    reopened = await factory.open_session("room", "fairy-3", resume="s-dead")
    assert reopened.session_id == "s-dead" and "s-dead" not in wire.rows  # its row exists
    assert wire.sent == [("s-dead", wire.sent[0][1])] and not wire.mirror.in_flight()
    assert "box" not in wire.mirror.shapes
    await factory.close_session(reopened, "reverted")
    assert wire.rows == {"s-dead": "done"} and registry.overview() == []


async def test_a_run_cancelled_before_its_task_began_still_ends_once() -> None:
    wire, runner = Wire(), UntilCancelled()
    registry = _registry(wire, lambda: runner)
    with structlog.testing.capture_logs() as logs:
        sid = await registry.start(PromptInput(message="a box", source="browser", requester="a"))
        assert registry.cancel(sid, "a")  # at once: its task has not run a step yet
        result = await registry.wait(sid, timeout=5)
    assert result.outcome == "canceled" and not runner.started.is_set()
    assert wire.rows == {sid: "canceled"} and wire.statuses(sid) == ["canceled"]
    assert [e["outcome"] for e in logs if e["event"] == "session_ended"] == ["canceled"]


async def test_a_revert_run_is_a_run_of_the_registry() -> None:
    wire = Wire()
    registry = _registry(wire, UntilCancelled)
    with structlog.testing.capture_logs() as logs:
        session = await registry.open_revert("s-0123456789abcdef", "ann")
        sid = session.session_id
        # The registry's id scheme; the caller owns it, the operator sees it while it runs.
        assert re.fullmatch(r"s-[0-9a-f]{16}", sid)
        assert registry.owner(sid) == "ann" and registry.is_open(sid)
        assert [v["session_id"] for v in registry.overview()] == [sid]
        assert registry.kinds[sid] == "revert" and registry.fairy_of(sid) is None
        # One envelope sent at once: a cancel does not stop it halfway (revert it instead).
        assert not registry.cancel(sid, "ann")
        await session.send_status("streaming")
        figures: dict[str, object] = {"reverts": "s-0123456789abcdef", "restored": 2}
        result = await registry.close_revert(session, "done", figures)
        again = await registry.close_revert(session, "error: late", figures)

    assert again is result and result.outcome == "done"
    assert registry.overview() == [] and registry.owner(sid) == "ann"
    assert wire.rows == {sid: "done"} and wire.statuses(sid) == ["streaming", "done"]
    ended = [e for e in logs if e["event"] == "session_ended"]
    assert len(ended) == 1
    assert (ended[0]["kind"], ended[0]["source"], ended[0]["outcome"]) == (
        "revert",
        "revert",
        "done",
    )
    assert (ended[0]["reverts"], ended[0]["restored"]) == ("s-0123456789abcdef", 2)
    cancels = [(e["owner"], e["ok"]) for e in logs if e["event"] == "session_cancel"]
    assert cancels == [("ann", False)]


async def test_a_failed_revert_run_ends_with_an_error_status() -> None:
    wire = Wire()
    registry = _registry(wire, UntilCancelled)
    session = await registry.open_revert("s-0123456789abcdef", "ann")
    result = await registry.close_revert(session, "error: RuntimeError", {})
    assert result.outcome == "error: RuntimeError"
    assert wire.rows == {session.session_id: "error"}
    assert wire.statuses(session.session_id) == ["error"]


class Restarting(Wire):
    """An outbox whose Postgres is away for the first `away` attempts to close a row."""

    def __init__(self, away: int) -> None:
        super().__init__()
        self.away = away

    async def end_session(self, session_id: str, status: str, outcome: str) -> None:
        if self.away:
            self.away -= 1
            raise ConnectionRefusedError("Postgres is restarting")
        await super().end_session(session_id, status, outcome)


async def test_a_run_ending_while_postgres_restarts_still_closes_its_row() -> None:
    """A row left `running` would be ended `interrupted` by the next start of the steward."""
    wire, runner = Restarting(away=3), UntilCancelled()
    registry = _registry(wire, lambda: runner)
    sid = await registry.start(PromptInput(message="a box", source="browser", requester="a"))
    assert registry.cancel(sid, "a")
    result = await registry.wait(sid, timeout=20)
    assert result.outcome == "canceled"
    assert wire.away == 0 and wire.rows == {sid: "canceled"}
