"""One view, one name: the box a person's screen shows reads "the user's view" whether the
asker's browser or the room's last report gave it, the name is explained in the system
prompt before the request uses it, and the viewport line comes before the image whose
caption refers to it ("given above")."""

from __future__ import annotations

from steward.canvas.coords import CoordinateSpace
from steward.fairies.modes import mode
from steward.prompt.registry import build_request
from steward.prompt.state import PromptState, ViewKind
from steward.protocol.box import Box

JPEG = b"\xff\xd8\xff\xe0fake"


def _request(kind: ViewKind) -> tuple[str, list[dict[str, object]]]:
    m = mode("one-shotting")
    state = PromptState(
        message="draw a cat",
        shapes={},
        viewport=Box(47_360, -31_460, 960, 600),
        coords=CoordinateSpace.at(47_360, -31_460),
        enabled_actions=m.actions,
        view_kind=kind,
        screenshot=JPEG,
    )
    req = build_request(state, m)
    return req.system[0], req.user


def _viewport_line(user: list[dict[str, object]]) -> str:
    return next(str(b["text"]) for b in user if str(b.get("text", "")).startswith("Your viewport"))


def test_the_askers_and_the_rooms_view_of_one_box_read_alike() -> None:
    (_, asker), (_, room) = _request("asker"), _request("room")
    assert _viewport_line(asker) == _viewport_line(room)
    assert _viewport_line(asker).startswith("Your viewport (the user's view): ")
    said = "\n".join(str(b.get("text", "")) for b in [*asker, *room])
    assert "asker's view" not in said and "room's view" not in said


def test_the_name_is_explained_in_the_system_prompt() -> None:
    system, _ = _request("asker")
    assert "\"The user's view\" is the part of the canvas a person's screen shows" in system


def test_the_viewport_comes_before_the_image_that_says_it_is_above() -> None:
    _, user = _request("asker")
    kinds = [b["type"] for b in user]
    at_view = next(i for i, b in enumerate(user) if str(b.get("text", "")).startswith("Your view"))
    at_caption = next(i for i, b in enumerate(user) if "given above" in str(b.get("text", "")))
    at_image = kinds.index("image")
    assert at_view < at_caption < at_image
    caption = str(user[at_caption]["text"])
    assert caption.startswith("The image below (the user's view) shows exactly your viewport")
    assert "x 0 to 960, y 0 to 600" in caption
