"""One agent for every role: a one-shot prompt is a request queued to its asker's
one-shotting fairy, run by that fairy's worker, built by the fairies' request builder; and
each kind of run shows the other's runs in the room, one line each with who asked."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from steward.config import Settings
from steward.fairies import fairy_request
from steward.fairies.one_shot_runner import OneShotConfig, OneShotRunner
from steward.fairies.runtime import FairyRuntime
from steward.model.base import ModelRequest, Usage
from steward.model.scripted import ScriptedProjectModel
from steward.ports import PromptInput
from steward_tools.canned_model import CannedModel
from steward_tools.memory_session import MemoryRoom, MemorySession, MemorySessions
from tests.unit.test_agent_core import body, box

DRAW = body(box("r1"), {"_type": "message", "text": "Drew a box."})


def ask(text: str, who: str = "alice") -> PromptInput:
    return PromptInput(message=text, source="browser", requester=who)


def history(request: ModelRequest) -> str:
    return next(
        (str(b["text"]) for b in request.user if str(b.get("text", "")).startswith("Earlier")),
        "",
    )


class _Where(CannedModel):
    """CannedModel, noting which task streamed each request."""

    def __init__(self, texts: list[str]) -> None:
        super().__init__(texts)
        self.tasks: list[str] = []

    async def stream(self, request: ModelRequest, usage: Usage) -> AsyncIterator[str]:
        task = asyncio.current_task()
        self.tasks.append(task.get_name() if task is not None else "")
        async for chunk in super().stream(request, usage):
            yield chunk


async def test_a_one_shot_runs_requests_are_built_by_the_fairy_request_builder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[tuple[str, Any]] = []
    real = fairy_request.prompt

    def spy(*args: Any) -> ModelRequest:
        _, fairy_id, req = args[:3]
        built.append((fairy_id, req.job))
        return real(*args)

    monkeypatch.setattr(fairy_request, "prompt", spy)
    model = CannedModel(
        [
            body({"_type": "review", "intent": "check", "x": 0, "y": 0, "w": 400, "h": 300}),
            DRAW,
        ]
    )
    agent = OneShotRunner(OneShotConfig(settings=Settings(), model=model))
    session = MemorySession(room_id="built", session_id="s-1")
    assert await agent.run(session, ask("draw a box")) == "done"
    # Both requests of the run (the prompt and its review follow-up) came from the builder,
    # as the one-shotting fairy's, carrying the prompt's job.
    assert [f for f, _ in built] == ["one-shot:alice", "one-shot:alice"]
    assert all(job is not None and job.session is session for _, job in built)
    assert len(model.requests) == 2
    # Its parts are the one-shotting mode's canvas view and request, with the one-shot's
    # actions (no fairy action), no fairy brief, and the follow-up named in the second.
    first, second = model.requests
    words = "\n".join(first.system) + "\n".join(str(b.get("text", "")) for b in first.user)
    assert "no shapes in your view" in words and "User request: draw a box" in words
    assert "fly-to-bounds" not in words  # the one fairy action of the mode is left out
    assert "fairy" not in first.hints  # a crew fairy's brief and hints are not a one-shot's
    assert (first.hints["followup"], second.hints["followup"]) == (None, "review")
    assert "Your viewport (the area you asked to review): " in str(second.user)


async def test_a_one_shot_follow_up_runs_in_the_fairys_worker_and_prompts_queue_there() -> None:
    model = _Where(
        [
            body({"_type": "review", "intent": "check", "x": 0, "y": 0, "w": 400, "h": 300}),
            DRAW,
            DRAW,
        ]
    )
    runtime = FairyRuntime()
    agent = OneShotRunner(OneShotConfig(settings=Settings(), model=model, fairies=runtime))
    first = MemorySession(room_id="queued", session_id="s-1")
    second = MemorySession(room_id="queued", session_id="s-2")
    one = asyncio.create_task(agent.run(first, ask("draw a box")))
    two = asyncio.create_task(agent.run(second, ask("and another")))
    outcomes = await asyncio.wait_for(asyncio.gather(one, two), 10)
    assert outcomes == ["done", "done"]
    # The prompt, its review follow-up and the next prompt: all run by alice's fairy's
    # worker, one after the other, never by the prompt's caller.
    worker = "fairy-request:queued:one-shot:alice"
    assert model.tasks == [worker] * 3
    room = runtime.rooms["queued"]
    state = room.fairy("one-shot:alice")
    assert state.worker is None and not state.queue and state.lent is None
    assert [s for s, _ in first.statuses if s in ("scheduled", "done")][-2:] == [
        "scheduled",
        "done",
    ]
    assert [r.hints["followup"] for r in model.requests] == [None, "review", None]
    assert [i.run for i in state.history if i.kind == "prompt"] == ["s-1", "s-2"]


async def test_two_askers_one_shot_prompts_run_at_the_same_time() -> None:
    gate = asyncio.Event()
    started: list[str] = []

    class Waiting(CannedModel):
        async def stream(self, request: ModelRequest, usage: Usage) -> AsyncIterator[str]:
            started.append(str(request.hints.get("message", "")))
            if len(started) == 2:
                gate.set()
            await asyncio.wait_for(gate.wait(), 5)  # both must be streaming at once
            async for chunk in super().stream(request, usage):
                yield chunk

    runtime = FairyRuntime()
    agent = OneShotRunner(
        OneShotConfig(settings=Settings(), model=Waiting([DRAW]), fairies=runtime)
    )
    a = agent.run(MemorySession(room_id="two", session_id="s-a"), ask("one", "alice"))
    b = agent.run(MemorySession(room_id="two", session_id="s-b"), ask("two", "bob"))
    assert await asyncio.wait_for(asyncio.gather(a, b), 10) == ["done", "done"]
    assert len(started) == 2


class _Recording(ScriptedProjectModel):
    def __init__(self) -> None:
        super().__init__(tokens_per_s=None)
        self.requests: list[ModelRequest] = []

    def stream(self, request: ModelRequest, usage: Usage) -> AsyncIterator[str]:
        self.requests.append(request)
        return super().stream(request, usage)


async def test_the_crew_sees_one_shot_runs_and_one_shot_runs_see_the_crews() -> None:
    shared = MemoryRoom()
    crew_model = _Recording()
    runtime = FairyRuntime(sessions=MemorySessions(shared), models=lambda *_: crew_model)
    agent = OneShotRunner(
        OneShotConfig(settings=Settings(), model=CannedModel([DRAW]), fairies=runtime)
    )
    # Bob's one-shot run, then a project for alice by the crew.
    bob = MemorySession(shared, room_id="shared", session_id="s-bob")
    assert await asyncio.wait_for(agent.run(bob, ask("draw a red box", "bob")), 10) == "done"
    lead = MemorySession(shared, room_id="shared", session_id="s-lead")
    project = PromptInput(message="draw a farm", source="browser", requester="alice")
    assert await asyncio.wait_for(runtime.run(lead, project), 20) == "done"
    lead_first = next(r for r in crew_model.requests if r.hints["fairy"]["mode"] != "working-drone")
    said = history(lead_first)
    assert '[bob\'s run] asked "draw a red box"' in said and "r1" in said
    drone = next(r for r in crew_model.requests if r.hints["fairy"]["mode"] == "working-drone")
    assert "[bob's run]" in history(drone)
    # Carol's one-shot prompt sees the crew's project run as one line, for whom it was.
    carol_model = CannedModel([DRAW])
    carol_agent = OneShotRunner(
        OneShotConfig(settings=Settings(), model=carol_model, fairies=runtime)
    )
    carol = MemorySession(shared, room_id="shared", session_id="s-carol")
    assert await asyncio.wait_for(carol_agent.run(carol, ask("add a legend", "carol")), 10) == (
        "done"
    )
    seen = history(carol_model.requests[0]).splitlines()
    crew_lines = [ln for ln in seen if ln.startswith("[alice's project run]")]
    assert len(crew_lines) == 1, seen
    assert 'asked "draw a farm"' in crew_lines[0] and "created" in crew_lines[0]
    assert any(ln.startswith("[bob's run]") for ln in seen)


async def test_cancelling_a_one_shot_prompt_stops_its_request_and_reverts_its_partials() -> None:
    streaming = asyncio.Event()

    class Stalls(CannedModel):
        async def stream(self, request: ModelRequest, usage: Usage) -> AsyncIterator[str]:
            async for chunk in super().stream(request, usage):
                yield chunk
            streaming.set()
            await asyncio.sleep(30)  # never finishes: the prompt is cancelled first

    runtime = FairyRuntime()
    half = body(box("r1"), close=False)[:-1]  # the box's text still streaming
    agent = OneShotRunner(OneShotConfig(settings=Settings(), model=Stalls([half]), fairies=runtime))
    session = MemorySession(room_id="stop", session_id="s-stop")
    run = asyncio.create_task(agent.run(session, ask("draw a box")))
    await asyncio.wait_for(streaming.wait(), 5)
    assert any(partial for partial, _ in session.envelopes)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(run, 5)
    # Its request stopped before the caller heard so: the partial is undone (a final
    # `think` under its id), the session is no longer lent, and the worker is free.
    partial_ids = {a.id for partial, acts in session.envelopes if partial for a in acts}
    finals = [a for partial, acts in session.envelopes if not partial for a in acts]
    assert any(a.name == "think" and a.id in partial_ids for a in finals)
    state = runtime.rooms["stop"].fairy("one-shot:alice")
    assert state.lent is None and state.turn is None
    await asyncio.wait_for(asyncio.gather(*runtime.rooms["stop"].working()), 5)
    assert state.worker is None
