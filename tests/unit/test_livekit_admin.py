"""Which of a room's agent dispatches the steward that serves it deletes: the others of its
own agent (a dead worker's, one whose job found the room taken), never its own nor
another agent's."""

from __future__ import annotations

from livekit import api

from steward.room.workers.livekit_admin import superseded


def _dispatch(dispatch_id: str, agent: str) -> api.AgentDispatch:
    return api.AgentDispatch(id=dispatch_id, agent_name=agent, room="r")


def test_only_the_other_dispatches_of_our_agent_are_superseded() -> None:
    listed = [
        _dispatch("AD_dead", "steward"),
        _dispatch("AD_mine", "steward"),
        _dispatch("AD_unnamed", ""),  # livekit-server's own, for agents without a name
        _dispatch("AD_voice", "voice-bot"),
        _dispatch("AD_refused", "steward"),
    ]
    assert superseded(listed, "steward", keep="AD_mine") == ["AD_dead", "AD_refused"]
    assert superseded(listed[1:2], "steward", keep="AD_mine") == []
