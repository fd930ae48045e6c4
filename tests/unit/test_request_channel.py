"""The request says who asked, how their words came (typed in the panel, the room's chat,
spoken, over HTTP) and where the reply will be read; the viewport guide reads one way."""

from __future__ import annotations

import pytest

from steward.actions.base import Scheduled
from steward.canvas.coords import CoordinateSpace
from steward.fairies.modes import mode
from steward.model.base import ModelRequest
from steward.ports import PromptChannel, PromptInput
from steward.prompt.registry import build_request
from steward.prompt.state import PromptState
from steward.protocol.box import Box


def _request(**kw: object) -> ModelRequest:
    m = mode("one-shotting")
    state = PromptState(
        message="draw a barn",
        shapes={},
        viewport=Box(0, 0, 800, 600),
        coords=CoordinateSpace(0, 0),
        enabled_actions=m.actions,
        **kw,  # type: ignore[arg-type]
    )
    return build_request(state, m)


def _said(**kw: object) -> str:
    return "\n".join(str(b.get("text", "")) for b in _request(**kw).user)


@pytest.mark.parametrize(
    ("channel", "how", "where"),
    [
        ("panel", "typed in the steward panel", "in the steward panel of everyone"),
        ("chat", "sent in the room's text chat (LiveKit's lk.chat)", "in the room's text chat"),
        ("voice", "spoken aloud and transcribed", "as text (it is not spoken)"),
        ("http", "posted over the steward's HTTP API", "in the run's HTTP result"),
    ],
)
def test_the_request_names_the_asker_the_channel_and_where_the_reply_goes(
    channel: PromptChannel, how: str, where: str
) -> None:
    said = _said(channel=channel, asker="alice")
    line = next(x for x in said.split("\n") if x.startswith("Asked by alice"))
    assert how in line and f"Your message will be read {where}" in line
    assert "\nUser request: draw a barn" in said
    # A follow-up (a review) repeats it above the original request.
    again = _said(channel=channel, asker="alice", followup=Scheduled("review", "the barn"))
    assert line in again and "Original request: draw a barn" in again


def test_without_an_asker_or_channel_nothing_is_claimed() -> None:
    assert "Asked" not in _said()
    assert "This request was posted over the steward's HTTP API" in _said(channel="http")


def test_a_prompt_knows_its_channel() -> None:
    def ask(source: str, **kw: object) -> PromptChannel:
        return PromptInput(message="m", source=source, requester="a", **kw).channel  # type: ignore[arg-type]

    assert ask("browser") == "panel" and ask("browser", chat=True) == "chat"
    assert (ask("voice"), ask("http"), ask("system")) == ("voice", "http", "system")


def test_the_empty_canvas_rule_reads_one_way() -> None:
    system = "\n".join(str(x) for x in _request().system)
    assert "about 80% as tall as the viewport" in system and "80% of its height" not in system
