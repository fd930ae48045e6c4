"""Directing a group: the fairies a prompt picks work it solo (one), as a duo (two) or as a
project the first one leads (three or more), then go back to their home roles."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from steward.fairies.kinds import DRONE, DUO, LEAD, SOLO, directing
from steward.fairies.prompt_router import PromptRouter, for_fairies, spoken_pick
from steward.fairies.runtime import FairyRuntime
from steward.model.base import ModelRequest, Usage
from steward.model.scripted.project_model import ScriptedProjectModel
from steward.ports import PromptInput, PromptSource, SessionPort
from steward_tools.memory_session import MemoryRoom, MemorySession, MemorySessions

HOME = {"fairy-1": "orchestrator", "fairy-2": "drone", "fairy-3": "drone"}


def _prompt(text: str, source: PromptSource = "browser", **kw: Any) -> PromptInput:
    return PromptInput(message=text, source=source, requester="u", **kw)


@pytest.mark.parametrize(
    ("picked", "lead", "members"),
    [(1, SOLO, None), (2, DUO, DRONE), (3, LEAD, DRONE), (10, LEAD, DRONE)],
)
def test_the_number_picked_chooses_the_kinds(picked: int, lead: object, members: object) -> None:
    assert directing(picked) == (lead, members)


@pytest.mark.parametrize("picked", [0, 11])
def test_no_kind_leads_none_or_more_than_a_room_holds(picked: int) -> None:
    with pytest.raises(ValueError, match="no kind leads"):
        directing(picked)


@pytest.mark.parametrize(
    ("message", "source", "fairies", "routed"),
    [
        ("draw a cat", "browser", ("fairy-2",), "draw a cat"),
        ("project: draw a farm", "browser", ("fairy-2",), "draw a farm"),
        ("project draw a farm", "voice", (), "draw a farm"),
        ("Project, draw a farm", "voice", (), "draw a farm"),
        ("project draw a farm", "browser", (), None),  # typed: the colon says it
        ("projects are fun", "voice", (), None),
        ("project", "voice", (), None),  # nothing to do
    ],
)
def test_picked_fairies_and_spoken_projects_reach_the_fairies(
    message: str, source: PromptSource, fairies: tuple[str, ...], routed: str | None
) -> None:
    out = for_fairies(_prompt(message, source, fairies=fairies))
    assert (out.message if out else None) == routed
    if out is not None:
        assert out.fairies == fairies


def _runtime(browser: MemoryRoom) -> FairyRuntime:
    return FairyRuntime(sessions=MemorySessions(browser))


def _roles(runtime: FairyRuntime, room: str) -> dict[str, str]:
    return {f.id: f.role for f in runtime.rooms[room].roster.fairies.values()}


async def _ask(
    runtime: FairyRuntime, browser: MemoryRoom, room: str, text: str, *picked: str
) -> str:
    session = MemorySession(browser, room_id=room)
    return await asyncio.wait_for(runtime.run(session, _prompt(text, fairies=picked)), 30)


async def test_one_picked_fairy_works_it_solo_with_its_own_tasks() -> None:
    browser = MemoryRoom()
    runtime = _runtime(browser)
    assert await _ask(runtime, browser, "r", "draw a harbour", "fairy-2") == "done"
    room = runtime.rooms["r"]
    tasks = room.board.solo_tasks_of("fairy-2")
    assert len(tasks) >= 1 and all(t.status == "done" for t in tasks)
    assert not room.board.projects  # no project: it worked alone
    assert any(i.kind == "prompt" for i in room.history_of("fairy-2"))
    assert room.history_of("fairy-1") == [] and room.history_of("fairy-3") == []
    assert _roles(runtime, "r") == HOME  # back to its home role
    assert {f.mode for f in room.roster.fairies.values()} == {"idling"}


async def test_two_picked_fairies_work_as_a_duo_the_first_leading_and_drawing() -> None:
    browser = MemoryRoom()
    runtime = _runtime(browser)
    assert await _ask(runtime, browser, "r", "draw a garden", "fairy-3", "fairy-1") == "done"
    room = runtime.rooms["r"]
    (project,) = room.board.projects.values()
    assert project.kind == "duo" and project.status == "done"
    assert project.orchestrator == "fairy-3" and project.members == ("fairy-1",)
    owners = {t.assigned_to for t in room.board.project_tasks(project.id)}
    assert owners == {"fairy-3", "fairy-1"}  # the lead drew a part too
    assert room.history_of("fairy-2") == []  # not picked: not in it
    assert _roles(runtime, "r") == HOME


async def test_three_picked_fairies_work_a_project_the_first_one_leads() -> None:
    browser = MemoryRoom()
    runtime = _runtime(browser)
    picked = ("fairy-2", "fairy-3", "fairy-1")
    assert await _ask(runtime, browser, "r", "draw a farm", *picked) == "done"
    room = runtime.rooms["r"]
    (project,) = room.board.projects.values()
    assert project.kind == "orchestrated" and project.status == "done"
    assert project.orchestrator == "fairy-2" and set(project.members) == {"fairy-3", "fairy-1"}
    assert all(t.assigned_to != "fairy-2" for t in room.board.project_tasks(project.id))
    assert _roles(runtime, "r") == HOME
    # `project:` still reaches the room's lead and every free drone afterwards.
    session = MemorySession(browser, room_id="r")
    routed = for_fairies(_prompt("project: draw a pond"))
    assert routed is not None
    assert await asyncio.wait_for(runtime.run(session, routed), 30) == "done"
    second = list(room.board.projects.values())[-1]
    assert second.orchestrator == "fairy-1" and set(second.members) == {"fairy-2", "fairy-3"}
    assert second.status == "done"
    tasks = room.board.project_tasks(second.id)
    assert tasks and all(t.status == "done" for t in tasks)
    # Its tasks have ids of their own (a room's task ids are one namespace): no mistakes.
    assert [i.text for f in room.fairies.values() for i in f.history if i.kind == "feedback"] == []


async def test_two_groups_work_at_once_and_each_prompt_ends_with_its_own_group() -> None:
    browser = MemoryRoom()
    runtime = _runtime(browser)
    solo = _ask(runtime, browser, "r", "draw a harbour", "fairy-1")
    duo = _ask(runtime, browser, "r", "draw a garden", "fairy-2", "fairy-3")
    assert await asyncio.gather(solo, duo) == ["done", "done"]
    room = runtime.rooms["r"]
    (project,) = room.board.projects.values()
    assert project.orchestrator == "fairy-2" and project.members == ("fairy-3",)
    assert room.board.solo_tasks_of("fairy-1")
    assert _roles(runtime, "r") == HOME


async def test_a_pick_of_an_unknown_or_busy_fairy_is_refused_and_says_why() -> None:
    browser = MemoryRoom()
    runtime = _runtime(browser)
    session = MemorySession(browser, room_id="r")
    out = await runtime.run(session, _prompt("draw", fairies=("fairy-9",)))
    assert out == "error: There is no fairy 'fairy-9' in this room."
    assert [text for _, text, _ in session.chats] == ["There is no fairy 'fairy-9' in this room."]
    room = runtime.rooms["r"]
    room.roster.update("fairy-3", mode="working-drone")
    out = await runtime.run(session, _prompt("draw", fairies=("fairy-2", "fairy-3")))
    name = room.roster.get("fairy-3").name
    assert out == f"error: {name} is busy. Pick a free fairy, or ask again when it is done."
    assert _roles(runtime, "r") == HOME  # nothing was assigned
    assert not room.fairy("fairy-2").queue and room.fairy("fairy-2").worker is None


class HeldSolo(ScriptedProjectModel):
    """Holds a solo fairy's first drawing request until `gate` opens."""

    def __init__(self) -> None:
        super().__init__(tokens_per_s=None)
        self.gate = asyncio.Event()
        self.holding = asyncio.Event()

    async def stream(self, request: ModelRequest, usage: Usage) -> AsyncIterator[str]:
        fairy: dict[str, Any] = request.hints.get("fairy") or {}
        if fairy.get("mode") == "working-solo" and not self.gate.is_set():
            self.holding.set()
            await self.gate.wait()
        async for chunk in super().stream(request, usage):
            yield chunk


async def test_a_picked_fairy_a_user_stops_is_free_for_the_next_pick() -> None:
    browser = MemoryRoom()
    model = HeldSolo()
    runtime = FairyRuntime(sessions=MemorySessions(browser), models=lambda *_: model)
    run = asyncio.ensure_future(_ask(runtime, browser, "r", "draw a garden", "fairy-2"))
    await asyncio.wait_for(model.holding.wait(), 10)
    room = runtime.rooms["r"]
    assert room.roster.get("fairy-2").mode == "working-solo"
    run.cancel()  # the asker cancels the run mid-task
    with pytest.raises(asyncio.CancelledError):
        await run
    await asyncio.wait_for(room.background.wait(), 10)
    assert room.roster.get("fairy-2").mode == "idling" and _roles(runtime, "r") == HOME
    model.gate.set()
    assert await _ask(runtime, browser, "r", "draw a garden", "fairy-2") == "done"


NAMES = {"bramble": "fairy-1", "clover": "fairy-2", "fennel": "fairy-3"}


@pytest.mark.parametrize(
    ("message", "picked"),
    [
        ("Clover, draw a garden", (("fairy-2",), "draw a garden")),
        ("clover and fennel draw a garden", (("fairy-2", "fairy-3"), "draw a garden")),
        (
            "Fennel, Bramble and Clover: draw a farm",
            (("fairy-3", "fairy-1", "fairy-2"), "draw a farm"),
        ),
        ("clover and clover draw a cat", (("fairy-2",), "draw a cat")),
        ("draw a clover", None),  # a name later in the sentence picks nobody
        ("Clover", None),  # nothing to do
        ("Clovers, draw", None),
        ("Clover and Nettle draw a cat", (("fairy-2", "nettle"), "draw a cat")),  # refused later
    ],
)
def test_spoken_names_pick_fairies_in_order(
    message: str, picked: tuple[tuple[str, ...], str] | None
) -> None:
    assert spoken_pick(message, NAMES) == picked


async def test_the_router_picks_spoken_names_for_voice_prompts_only() -> None:
    seen: list[PromptInput] = []

    class Runner:
        async def run(self, session: SessionPort, prompt: PromptInput) -> str:
            seen.append(prompt)
            return "done"

    router = PromptRouter(Runner(), Runner(), names=lambda room: NAMES if room == "r" else {})
    session = MemorySession(MemoryRoom(), room_id="r")
    await router.run(session, _prompt("Clover and Fennel, draw a garden", "voice"))
    await router.run(session, _prompt("Clover and Fennel, draw a garden"))  # typed: as written
    assert [(p.fairies, p.message) for p in seen] == [
        (("fairy-2", "fairy-3"), "draw a garden"),
        ((), "Clover and Fennel, draw a garden"),
    ]
