"""The history says whose each request was and how each run ended, in the labels the system
prompt explains: another person's prompt is "[alice asked] …", never a bare "[user] …"; a run
that ended without its answer says so ("alice's request failed …; nothing was drawn"), in the
asker's own history and in the line that sums it up for others; every label a history prints
is one the guide names, and every label the guide names is printed."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from steward.config import Settings
from steward.fairies.memory import (
    action_item,
    chat_items,
    prompt_item,
    run_end_item,
    task_end_items,
)
from steward.fairies.modes import MODES
from steward.fairies.one_shot_runner import OneShotConfig, OneShotRunner
from steward.fairies.persistence import history_from, history_row
from steward.fairies.runtime import FairyRuntime
from steward.model.base import ModelError, ModelRequest
from steward.ports import PromptInput
from steward.prompt.parts.chat_history import bounded, history_lines, render_action
from steward.prompt.registry import PARTS
from steward.prompt.state import ChatItem
from steward.prompt.system_prompt import flow, system_prompt
from steward_tools.canned_model import CannedModel
from steward_tools.memory_session import MemoryRoom, MemorySession, MemorySessions
from tests.unit.test_agent_core import body, box
from tests.unit.test_request_frame import Recording


def _create(sid: str) -> dict[str, Any]:
    return {"_type": "create", "intent": sid, "shape": {"_type": "rectangle", "shapeId": sid}}


def test_a_crew_fairys_requests_name_who_wrote_them_and_keep_it_across_a_restart() -> None:
    items = [
        prompt_item("draw a floor plan of a flat", "project", "user", "alice"),
        action_item("start-project", {"title": "Flat"}, "project"),
        prompt_item("add a balcony", "project", "user", "bob"),
        prompt_item("Task done. Review it.", "project", "system", "bob"),  # not a person's
    ]
    lines = [ln.text for ln in history_lines(chat_items(items, "project"), None)]
    assert lines[0] == "[alice asked] draw a floor plan of a flat"
    assert lines[2] == "[bob asked] add a balcony"
    assert lines[3] == "[steward] Task done. Review it."
    assert not any(ln.startswith("[user") for ln in lines)
    assert [history_from(history_row(i)).asker for i in items] == ["alice", None, "bob", None]


def test_a_finished_tasks_summary_reads_as_words_under_the_labels_the_guide_names() -> None:
    """The end of a task hides its actions: the history says so in words, under one of the
    guide's labels (never a second, unexplained "[ACTIONS]: <…>" label), and the fairy's
    own note follows as "[you]"."""
    items = [
        prompt_item("draw a harbour", "fairy", "user", "alice"),
        *task_end_items("quay", "The quay", "stone quay", level="fairy"),
    ]
    lines = [ln.text for ln in history_lines(chat_items(items, "fairy"), None)]
    assert lines[1] == (
        "[steward] The task's actions are left out from here on; the next line sums it up."
    )
    assert lines[2] == '[you] I just finished the task "quay" (The quay): stone quay'
    assert not any("[ACTIONS]" in ln for ln in lines)


# The guide's labels, as patterns: `name` is a person, `N` a number.
def _documented() -> dict[str, re.Pattern[str]]:
    labels = re.findall(r"(?:^- |; )(\[[^\]]+\])", flow(PARTS["chat_history"].guide), flags=re.M)
    out = {}
    for label in labels:
        pattern = re.escape(label).replace("name", r"[\w-]+").replace("N", r"\d+")
        out[label] = re.compile(pattern)
    return out


def test_every_label_printed_is_one_the_guide_explains_and_back() -> None:
    documented = _documented()
    assert set(documented) == {
        "[name asked]",
        "[you]",
        "[you, N actions]",
        "[steward]",
        "[name's run]",
        "[name's project run]",
        "[earlier, N items in brief]",
    }
    items = [
        ChatItem("user", "draw a map", who="alice", run="r1", asked_by="alice"),
        ChatItem("assistant", "create", action=_create("coast"), who="alice", run="r1"),
        *(
            ChatItem("assistant", "create", action=_create(f"town-{k}"), who="alice", run="r1")
            for k in range(3)
        ),
        ChatItem("system", "Feedback: 'x' does not exist", who="alice", run="r1"),
        ChatItem("assistant", "Done.", action={"_type": "message", "text": "Done."}, run="r1"),
        ChatItem("user", "draw a cat", who="bob", run="r2", asked_by="bob"),
        ChatItem("assistant", "create", action=_create("cat"), who="bob", run="r2"),
        ChatItem("user", "project: a farm", who="carol", run="c1", crew=True, asked_by="carol"),
        ChatItem("user", "project: a port", who="alice", run="c2", crew=True, asked_by="alice"),
    ]
    filler = [
        ChatItem("user", f"old request {k} " + "x" * 300, who="alice", run=f"o{k}")
        for k in range(6)
    ]
    lines = bounded(history_lines([*filler, *items], "alice"), budget=1200)
    printed = [re.match(r"\[[^\]]*\]", ln) for ln in lines]
    assert all(printed), lines
    labels = [m.group(0) for m in printed if m is not None]
    for label in labels:
        assert any(p.fullmatch(label) for p in documented.values()), label
    for name, pattern in documented.items():
        assert any(pattern.fullmatch(label) for label in labels), (name, labels)


def test_the_system_prompt_explains_the_labels_the_history_prints() -> None:
    m = MODES["orchestrating-active"]
    text = system_prompt(m.actions, [PARTS[p] for p in m.parts], m.name)
    assert "[name asked] a request that person made" in text
    assert "[user" not in text and "[system]" not in text


def _ask(text: str, who: str) -> PromptInput:
    return PromptInput(message=text, source="browser", requester=who)


def _said(request: ModelRequest) -> str:
    return "\n".join(str(b.get("text", "")) for b in request.user if b.get("type") == "text")


def _fails(request: ModelRequest) -> str:
    raise ModelError("no answer within 1800 s")


async def test_a_run_that_failed_reads_as_failed_for_its_asker_and_for_others() -> None:
    browser = MemoryRoom()
    failing = CannedModel(answer=_fails)
    runtime = FairyRuntime()
    agent = OneShotRunner(OneShotConfig(settings=Settings(), model=failing, fairies=runtime))
    alice = MemorySession(browser, room_id="ends", session_id="s-1")
    outcome = await asyncio.wait_for(agent.run(alice, _ask("draw a floor plan", "alice")), 10)
    assert outcome.startswith("error")
    # Later, bob asks (his run is summed up for him) and alice asks again (hers in full).
    drawn = body(box("b1", 10, 10), {"_type": "message", "text": "ok"})
    model = CannedModel([drawn])
    agent = OneShotRunner(OneShotConfig(settings=Settings(), model=model, fairies=runtime))
    bob = MemorySession(browser, room_id="ends", session_id="s-2")
    assert await asyncio.wait_for(agent.run(bob, _ask("add a tree", "bob")), 10) == "done"
    again = MemorySession(browser, room_id="ends", session_id="s-3")
    assert await asyncio.wait_for(agent.run(again, _ask("and now?", "alice")), 10) == "done"
    for_bob, for_alice = (_said(r) for r in model.requests[:2])
    assert (
        "[alice's run] asked \"draw a floor plan\"; alice's request failed: no answer came "
        "from the model; nothing was drawn" in for_bob
    )
    assert "[alice asked] draw a floor plan\n[steward] alice's request failed" in for_alice
    assert "nothing was drawn." in for_alice


def test_a_run_that_drew_before_it_ended_says_what_stays() -> None:
    item = run_end_item("alice", "timed out (it stalled or took too long)", 2, "fairy")
    assert item.text == (
        "alice's request timed out (it stalled or took too long); only the 2 change(s) "
        "listed before this were made."
    )


async def test_a_crew_run_for_another_person_is_theirs_in_a_one_shot_history() -> None:
    """alice's project, then bob's: carol's one-shot request credits each to its asker (the
    lead's latest asker is bob, which once named both runs his)."""
    browser = MemoryRoom()
    model = Recording()
    crew = (("fairy-1", "orchestrator"), ("fairy-2", "drone"))
    runtime = FairyRuntime(sessions=MemorySessions(browser), models=lambda *_: model, crew=crew)
    for who, asked in (("alice", "draw a barn"), ("bob", "draw a pond")):
        lead = MemorySession(browser, room_id="two", fairy="lead")
        assert await asyncio.wait_for(runtime.run(lead, _ask(asked, who)), 30) == "done"
    one = CannedModel([body({"_type": "message", "text": "ok"})])
    agent = OneShotRunner(OneShotConfig(settings=Settings(), model=one, fairies=runtime))
    carol = MemorySession(browser, room_id="two", session_id="s-carol")
    assert await asyncio.wait_for(agent.run(carol, _ask("what is here?", "carol")), 10) == "done"
    said = _said(one.requests[0])
    assert '[alice\'s project run] asked "draw a barn"' in said
    assert '[bob\'s project run] asked "draw a pond"' in said


def test_a_run_of_task_actions_says_which_tasks() -> None:
    """The lead read "[you, 3 actions] 3 × direct-to-start-project-task" and could not tell
    which tasks it had started."""
    starts = [
        ChatItem(
            "assistant",
            "direct-to-start-project-task",
            action={"_type": "direct-to-start-project-task", "taskId": t},
        )
        for t in ("ground", "lighthouse", "shops")
    ]
    (line,) = [ln.text for ln in history_lines(starts, None)]
    assert line == "[you, 3 actions] 3 × direct-to-start-project-task: ground, lighthouse, shops"


def test_an_echo_reads_whole_numbers_as_the_model_wrote_them() -> None:
    """A line the model wrote with 430, 406 was echoed "x1":430.0 — against "every number
    you see or give is a whole number"; a scale stays as it is."""
    line = {"_type": "create", "shape": {"_type": "line", "shapeId": "r", "x1": 430.0, "y1": 406.0}}
    assert render_action(line) == (
        '{"_type":"create","shape":{"_type":"line","shapeId":"r","x1":430,"y1":406}}'
    )
    assert '"scale":1.5' in render_action({"_type": "resize", "shapeIds": ["a"], "scale": 1.5})
