"""The kinds of request: one policy object each, chosen by the fairy that works it."""

from __future__ import annotations

from steward.actions.registry import ACTIONS
from steward.fairies.kinds import DRONE, DUO, KINDS, LEAD, ONE_SHOT, SOLO
from steward.fairies.modes import MODES, START_MODE, WORKING_MODE
from steward.fairies.projects import ProjectBoard
from steward.fairies.room_fairies import RoomFairies, one_shot_id
from steward.fairies.roster import Roster


def _room() -> RoomFairies:
    room = RoomFairies("r", Roster(), ProjectBoard("r"))
    for fid, role in (
        ("a", "solo"),
        ("b", "orchestrator"),
        ("c", "duo-orchestrator"),
        ("d", "drone"),
    ):
        room.roster.add(fid, role=role)
    return room


def test_a_fairy_works_the_kind_of_its_role_and_a_one_shotting_fairy_one_shot_prompts() -> None:
    room = _room()
    assert [room.kind_of(f) for f in "abcd"] == [SOLO, LEAD, DUO, DRONE]
    assert room.kind_of(one_shot_id("alice")) is ONE_SHOT
    assert set(KINDS) == {"one-shot", "solo", "duo", "lead", "drone"}


def test_the_room_lead_is_the_first_fairy_whose_kind_leads() -> None:
    room = _room()
    assert room.lead() == "b"


def test_one_shot_prompts_offer_no_fairy_action() -> None:
    offered = MODES["one-shotting"].actions
    assert any(ACTIONS[n].family == "fairy" for n in offered)  # fly-to-bounds
    assert LEAD.enabled(offered) == offered
    assert ONE_SHOT.enabled(offered) == tuple(n for n in offered if ACTIONS[n].family != "fairy")


def test_the_modes_start_and_work_where_the_kinds_say() -> None:
    assert START_MODE == {
        "solo": "soloing",
        "orchestrator": "orchestrating-active",
        "duo-orchestrator": "duo-orchestrating-active",
        "drone": "one-shotting",
    }
    assert WORKING_MODE == {
        "solo": "working-solo",
        "orchestrator": "working-orchestrator",
        "duo-orchestrator": "working-orchestrator",
        "drone": "working-drone",
    }


def test_a_one_shot_prompt_is_charged_once_and_a_crew_request_each_time() -> None:
    assert ONE_SHOT.charged == "per-run"
    assert {k.charged for k in (SOLO, DUO, LEAD, DRONE)} == {"per-request"}
    assert ONE_SHOT.frame == "first-view" and LEAD.frame == "room-origin"
    assert ONE_SHOT.numbering == "run" and DRONE.numbering == "session"
    assert ONE_SHOT.feedback == "lints" and SOLO.feedback == "queued"
    assert ONE_SHOT.history == "room-runs" and DUO.history == "remembered"
