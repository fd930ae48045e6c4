"""The prompt's words match what is sent and shown: name and personality only with a fairy
behind the request, each fairy its own personality, thoughts shown to users, work placed
where asked."""

from __future__ import annotations

from steward.actions.registry import ACTIONS
from steward.canvas.coords import CoordinateSpace
from steward.fairies.modes import mode
from steward.fairies.roster import DEFAULT_PERSONALITIES, Roster
from steward.model.base import ModelRequest
from steward.prompt.registry import build_request
from steward.prompt.state import FairyBrief, PromptState
from steward.protocol.box import Box


def _request(fairy: FairyBrief | None) -> ModelRequest:
    m = mode("one-shotting")
    state = PromptState(
        message="draw a farm to the right of the chart",
        shapes={},
        viewport=Box(0, 0, 800, 600),
        coords=CoordinateSpace(0, 0),
        enabled_actions=m.actions,
        fairy=fairy,
    )
    return build_request(state, m)


def _user_text(request: ModelRequest) -> str:
    return "\n".join(str(b.get("text", "")) for b in request.user)


def test_without_a_fairy_no_name_or_personality_is_promised() -> None:
    request = _request(None)
    system = "\n".join(request.system)
    assert "personality" not in system.lower()
    assert "You are " not in _user_text(request)


def test_a_fairy_gets_its_own_name_and_personality() -> None:
    brief = FairyBrief(id="f1", name="Moss", personality="quiet and patient")
    request = _request(brief)
    assert "## Who you are" in "\n".join(request.system)
    assert "You are Moss (id f1), a fairy. Personality: quiet and patient." in _user_text(request)


def test_the_roster_hands_out_distinct_personalities() -> None:
    roster = Roster()
    fairies = [roster.add(f"f{i}") for i in range(len(DEFAULT_PERSONALITIES) - 1)]
    assert len({f.personality for f in fairies}) == len(fairies)
    assert all(f.personality for f in fairies)
    assert roster.add("own", personality="grumpy").personality == "grumpy"


def test_thoughts_are_not_called_invisible() -> None:
    guide = ACTIONS["think"].guide.lower()
    assert "nobody sees" not in guide
    assert "chat panel" in guide and "collapsed" in guide


def test_work_goes_where_asked_and_is_located_in_the_message() -> None:
    system = "\n".join(_request(None).system)
    assert "Keep everything you create or change inside your viewport" not in system
    assert "where the user asked for it" in system
    assert "say in your message where it is" in system


def test_a_drones_view_of_its_task_area_is_captioned_once() -> None:
    m = mode("working-drone")
    state = PromptState(
        message="draw the pond",
        shapes={},
        viewport=Box(440, 400, 240, 300),
        view_kind="task",
        coords=CoordinateSpace(0, 0),
        enabled_actions=m.actions,
        screenshot=b"RIFF0000WEBPVP8 ",
        screenshot_type="image/webp",
    )
    said = _user_text(build_request(state, m))
    assert said.count("The image below (your task area)") == 1
    assert said.count("The image below") == 1


def test_a_wake_is_not_called_a_user_request() -> None:
    m = mode("orchestrating-active")
    state = PromptState(
        message='Task "pond" by fairy-3 is done. Review it.',
        shapes={},
        viewport=Box(0, 0, 800, 600),
        coords=CoordinateSpace(0, 0),
        enabled_actions=m.actions,
        request_from="steward",
    )
    said = _user_text(build_request(state, m))
    assert "User request:" not in said
    assert 'From the steward (not a user): Task "pond"' in said
    state.request_from = "user"
    assert "User request: Task" in _user_text(build_request(state, m))
