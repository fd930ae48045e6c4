"""A turn ended by an action still reads its stream to the end (bounded), counts the reply's
usage exactly, applies nothing after the action and logs what came after it as ignored."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from structlog.testing import capture_logs

from steward.actions.base import RunState
from steward.actions.registry import Outcome, select
from steward.model.base import ModelError, ModelRequest, Usage
from steward.turns import turn as turn_module
from steward.turns.turn import Turn, TurnDriver, TurnHooks
from steward_tools.memory_session import MemorySession


@dataclass
class TailStream:
    """Like the Messages API: output tokens are known only once the last text has streamed.
    `hang` waits forever after the text; `endless` keeps sending filler."""

    text: str
    output_tokens: int = 321
    chunk: int = 6
    hang: bool = False
    endless: bool = False
    fail: bool = False
    name: str = "test"
    sent: int = 0
    finished: bool = False
    closed: bool = False
    requests: list[ModelRequest] = field(default_factory=list)

    async def stream(self, request: ModelRequest, usage: Usage) -> AsyncIterator[str]:
        self.requests.append(request)
        usage.input_tokens += 1000
        try:
            for i in range(0, len(self.text), self.chunk):
                self.sent += 1
                await asyncio.sleep(0)
                yield self.text[i : i + self.chunk]
            while self.endless:
                await asyncio.sleep(0)
                yield " " * 1000
            if self.hang:
                await asyncio.Event().wait()
            if self.fail:
                raise ModelError("connection: ReadError", started=True)
            usage.output_tokens += self.output_tokens
            self.finished = True
        finally:
            self.closed = True


def body(*actions: dict[str, Any]) -> str:
    return ", ".join(json.dumps(a) for a in actions) + "]}"


BOX = {
    "_type": "create",
    "intent": "after the end",
    "shape": {"_type": "rectangle", "shapeId": "late", "x": 0, "y": 0, "w": 50, "h": 50},
}
SECRET = "a private sentence the model wrote after the end"


async def run(model: TailStream, session: MemorySession) -> tuple[str, Turn, Usage, list[Any]]:
    async def effect(out: Outcome) -> bool:
        return out.name == "fly-to-bounds"

    enabled = select(["create", "message", "think", "fly-to-bounds"])
    turn = Turn(session, RunState(shapes=session.canvas.shapes), 0, TurnHooks(lambda: enabled))
    turn.hooks.effect = effect
    usage = Usage()
    with capture_logs() as logs:
        end = await asyncio.wait_for(
            TurnDriver().drive(turn, model, ModelRequest([], []), usage), 10
        )
    return end, turn, usage, logs


ENDING = {"_type": "fly-to-bounds", "x": 1, "y": 2, "w": 30, "h": 40}


async def test_the_rest_of_the_stream_is_read_counted_and_ignored() -> None:
    session = MemorySession(session_id="s")
    text = body(
        {"_type": "message", "text": "On my way."},
        ENDING,
        BOX,
        {"_type": "message", "text": SECRET},
        {"_type": "think", "text": SECRET},
    )
    model = TailStream(text)
    end, turn, usage, logs = await run(model, session)
    assert end == "ended"
    assert model.finished and model.closed
    assert (usage.input_tokens, usage.output_tokens) == (1000, 321)
    assert turn.ignored == ["create", "message", "think"]
    # Nothing after the ending action was applied or said, not even a preview.
    assert "late" not in session.browser.shapes and session.browser.in_flight() == []
    assert all(SECRET not in text for _, text, _ in session.chats)
    (logged,) = [e for e in logs if e["event"] == "turn_tail_ignored"]
    assert logged["actions"] == 3 and logged["names"] == ["create", "message", "think"]
    assert logged["chars"] > 0 and logged["cut"] is None
    assert SECRET not in json.dumps(logs)


async def test_actions_in_the_same_chunk_as_the_ending_one_are_ignored_too() -> None:
    session = MemorySession(session_id="s")
    model = TailStream(body(ENDING, BOX, BOX), chunk=10_000)  # the whole reply at once
    end, turn, usage, _ = await run(model, session)
    assert end == "ended" and usage.output_tokens == 321
    assert turn.ignored == ["create", "create"] and session.browser.shapes == {}


async def test_a_tail_that_never_ends_is_given_up_on_in_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(turn_module, "TAIL_TIMEOUT_S", 0.2)
    session = MemorySession(session_id="s")
    model = TailStream(body(ENDING, BOX), hang=True)
    end, turn, usage, logs = await run(model, session)
    assert end == "ended" and model.closed and not model.finished
    assert turn.ignored == ["create"] and usage.output_tokens == 0
    (logged,) = [e for e in logs if e["event"] == "turn_tail_ignored"]
    assert logged["cut"] == "time"


async def test_a_tail_that_never_stops_is_cut_by_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(turn_module, "TAIL_MAX_CHARS", 5000)
    session = MemorySession(session_id="s")
    model = TailStream(body(ENDING), endless=True)
    end, _, _, logs = await run(model, session)
    assert end == "ended" and model.closed and not model.finished
    (logged,) = [e for e in logs if e["event"] == "turn_tail_ignored"]
    assert logged["cut"] == "size" and 5000 < logged["chars"] <= 6100


async def test_a_turn_not_ended_by_an_action_logs_no_tail() -> None:
    session = MemorySession(session_id="s")
    model = TailStream(body(BOX))
    end, turn, usage, logs = await run(model, session)
    assert end == "done" and usage.output_tokens == 321 and turn.ignored == []
    assert "late" in session.browser.shapes
    assert not [e for e in logs if e["event"] == "turn_tail_ignored"]


async def test_a_tail_that_fails_does_not_fail_the_ended_turn() -> None:
    session = MemorySession(session_id="s")
    model = TailStream(body(ENDING, BOX), fail=True)
    end, turn, _, logs = await run(model, session)
    assert end == "ended" and model.closed and turn.ignored == ["create"]
    assert [e["cut"] for e in logs if e["event"] == "turn_tail_ignored"] == ["error"]
    assert session.browser.shapes == {}


async def test_a_tail_stops_when_the_session_is_cancelled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(turn_module, "TAIL_MAX_CHARS", 10**12)
    session = MemorySession(session_id="s")
    model = TailStream(body(ENDING), endless=True)
    # The user stops the run while the tail streams (the session's flag, as its port sets it).
    cancel = asyncio.get_running_loop().call_later(0.05, setattr, session, "_cancelled", True)
    try:
        end, _, _, logs = await run(model, session)
    finally:
        cancel.cancel()
    assert end == "ended" and model.closed and not model.finished
    assert [e["cut"] for e in logs if e["event"] == "turn_tail_ignored"] == ["canceled"]
