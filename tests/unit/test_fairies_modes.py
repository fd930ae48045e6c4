"""Mode table, lifecycle hooks, refusals and interrupts."""

from __future__ import annotations

from steward.actions.registry import ACTIONS
from steward.fairies.interrupts import Interrupt, decide, feedback
from steward.fairies.modes import (
    ALL_FAIRY_ACTIONS,
    MAX_CONTINUATIONS,
    MODES,
    ModeFacts,
    mode,
)


def test_every_mode_of_the_issue_exists_with_its_memory_level() -> None:
    expected = {
        "idling": "fairy",
        "sleeping": "fairy",
        "one-shotting": "fairy",
        "soloing": "fairy",
        "working-solo": "task",
        "standing-by": "project",
        "orchestrating-active": "project",
        "orchestrating-waiting": "project",
        "duo-orchestrating-active": "project",
        "duo-orchestrating-waiting": "project",
        "working-drone": "task",
        "working-orchestrator": "task",
    }
    assert {n: m.memory for n, m in MODES.items()} == expected
    for m in MODES.values():
        assert m.fairy_actions <= ALL_FAIRY_ACTIONS
        assert "chat_history" in m.parts


def test_every_fairy_action_a_mode_offers_carries_its_effect() -> None:
    """Effects are dispatched through `spec.effect` alone: a fairy action a mode offers
    without one would be a silent no-op, and one with an effect no mode offers is dead."""
    offered = {n for m in MODES.values() for n in m.actions if ACTIONS[n].family == "fairy"}
    assert offered == set(ALL_FAIRY_ACTIONS)
    for name in offered:
        assert ACTIONS[name].effect is not None, name
    with_effect = {n for n, s in ACTIONS.items() if s.effect is not None}
    assert with_effect == offered


def test_orchestrators_never_edit_the_canvas_and_workers_do() -> None:
    for name in ("orchestrating-active", "duo-orchestrating-active", "soloing", "standing-by"):
        assert not mode(name).allows("create", "canvas")
        assert "cannot edit the canvas" in mode(name).refusal("create", "canvas")
    for name in ("working-drone", "working-solo", "working-orchestrator", "one-shotting"):
        assert mode(name).allows("create", "canvas")


def test_fairy_action_sets() -> None:
    assert mode("orchestrating-active").allows("direct-to-start-project-task", "fairy")
    assert not mode("orchestrating-active").allows("start-duo-task", "fairy")
    assert mode("duo-orchestrating-active").allows("start-duo-task", "fairy")
    assert mode("working-drone").allows("mark-my-task-done", "fairy")
    assert not mode("working-drone").allows("end-project", "fairy")
    assert not mode("orchestrating-waiting").allows("end-project", "fairy")
    msg = mode("working-drone").refusal("end-project", "fairy")
    assert "end-project" in msg and "mark-my-task-done" in msg


def test_prompt_start_by_role() -> None:
    idle = mode("idling")
    assert idle.on_prompt_start(ModeFacts(role="orchestrator")).mode == "orchestrating-active"
    assert idle.on_prompt_start(ModeFacts(role="duo-orchestrator")).mode == (
        "duo-orchestrating-active"
    )
    assert idle.on_prompt_start(ModeFacts(role="solo")).mode == "soloing"
    assert mode("orchestrating-waiting").on_prompt_start(ModeFacts()).mode == (
        "orchestrating-active"
    )


def test_orchestrator_turn_end() -> None:
    end = mode("orchestrating-active").on_prompt_end
    assert end(ModeFacts(project_active=True, waiting_on=2)).mode == "orchestrating-waiting"
    nudge = end(ModeFacts(project_active=True))
    assert nudge.mode is None and nudge.schedule and "end-project" in nudge.schedule
    assert end(ModeFacts(project_active=True, continuations=MAX_CONTINUATIONS)).mode == (
        "orchestrating-waiting"
    )
    assert end(ModeFacts(project_active=False)).mode == "idling"


def test_worker_turn_end() -> None:
    end = mode("working-drone").on_prompt_end
    assert end(ModeFacts(task_in_progress=False)).mode == "standing-by"
    assert end(ModeFacts(task_in_progress=True)).schedule
    assert end(ModeFacts(task_in_progress=True, continuations=MAX_CONTINUATIONS)).mode == (
        "standing-by"
    )
    assert mode("working-solo").on_prompt_end(ModeFacts()).mode == "soloing"
    assert mode("working-orchestrator").on_prompt_end(ModeFacts()).mode == (
        "duo-orchestrating-active"
    )


def test_users_cannot_cancel_an_orchestrator_mid_project_but_the_system_can() -> None:
    facts = ModeFacts(role="orchestrator", project_active=True)
    user = decide("orchestrating-active", facts, Interrupt(source="user", input="stop"))
    assert not user.cancel and user.refused and user.schedule == "stop"
    system = decide("orchestrating-waiting", facts, Interrupt(source="system", mode="idling"))
    assert system.cancel and system.switch_to == "idling"
    after = decide("orchestrating-active", ModeFacts(), Interrupt(source="user"))
    assert after.cancel


def test_drone_cancel_goes_standing_by_and_feedback_interrupts() -> None:
    d = decide("working-drone", ModeFacts(role="drone"), Interrupt(source="user"))
    assert d.cancel and d.switch_to == "standing-by"
    fb = decide("orchestrating-active", ModeFacts(project_active=True), feedback("no task x"))
    assert fb.cancel and fb.switch_to is None and fb.schedule and "no task x" in fb.schedule
