"""The inverse of a run, computed from the room's history (`steward.canvas.inverse`)."""

from __future__ import annotations

import copy
from typing import Any

from steward.canvas.apply import Shapes
from steward.canvas.inverse import HistoryEnvelope, RunInverse, run_inverse
from steward.canvas.mirror import CanvasMirror
from steward.protocol.messages import WireAction


def geo(sid: str, x: float, y: float, text: str = "", **extra: Any) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "id": sid,
        "type": "geo",
        "x": x,
        "y": y,
        "rotation": 0,
        "props": {"w": 100, "h": 50, "geo": "rectangle", "text": text},
    }
    rec.update(extra)
    return rec


def act(i: str, name: str, **params: Any) -> WireAction:
    return WireAction(id=i, name=name, params=params)  # type: ignore[arg-type]


def env(session: str, *actions: WireAction, partial: bool = False) -> HistoryEnvelope:
    return HistoryEnvelope(session, partial, list(actions))


def canvas(history: list[HistoryEnvelope]) -> Shapes:
    mirror = CanvasMirror()
    for e in history:
        mirror.apply(e.actions, partial=e.partial, session=e.session_id)
    return mirror.shapes


def revert(history: list[HistoryEnvelope], run: str, as_session: str) -> RunInverse:
    """Computes the inverse and appends it to `history` as session `as_session`."""
    inverse = run_inverse(history, run, id_prefix=as_session)
    if inverse.actions:
        history.append(env(as_session, *inverse.actions))
    return inverse


def base() -> list[HistoryEnvelope]:
    """Three shapes a user drew (relay session), bottom to top: a, b, c."""
    return [
        env(
            "relay:r",
            act("e1", "create_shape", **geo("a", 0, 0, "A")),
            act("e2", "create_shape", **geo("b", 200, 0, "B")),
            act("e3", "create_shape", **geo("c", 400, 0, "C")),
        )
    ]


def test_created_shapes_are_deleted_and_the_canvas_is_as_before() -> None:
    history = base()
    before = copy.deepcopy(canvas(history))
    history.append(
        env("s-1", act("x1", "create_shape", **geo("n1", 0, 300)), act("x2", "think", text="hm"))
    )
    history.append(env("s-1", act("x3", "create_shape", **geo("n2", 0, 400))))
    inverse = revert(history, "s-1", "r-1")
    assert inverse.found
    assert inverse.removed == ["n1", "n2"] and inverse.restored == [] and inverse.left == []
    assert [a.name for a in inverse.actions] == ["delete_shape"]
    assert canvas(history) == before
    assert list(canvas(history)) == list(before)


def test_moved_updated_and_deleted_shapes_come_back_in_their_z_order() -> None:
    history = base()
    before = copy.deepcopy(canvas(history))
    history.append(
        env(
            "s-1",
            act("m", "update_shape", id="a", x=10, y=20),
            act("u", "update_shape", id="c", props={"text": "changed"}),
            act("d", "delete_shape", ids=["b"]),
            act("n", "create_shape", **geo("n", 0, 500)),
        )
    )
    after_run = canvas(history)
    assert "b" not in after_run and after_run["a"]["x"] == 10
    inverse = revert(history, "s-1", "r-1")
    assert sorted(inverse.restored) == ["a", "b", "c"] and inverse.removed == ["n"]
    assert canvas(history) == before
    assert list(canvas(history)) == ["a", "b", "c"]  # b back between a and c


def test_a_shape_a_user_changed_after_the_run_is_left_and_named() -> None:
    history = base()
    history.append(
        env(
            "s-1",
            act("n1", "create_shape", **geo("n1", 0, 300)),
            act("n2", "create_shape", **geo("n2", 0, 400)),
            act("m", "update_shape", id="a", x=50),
        )
    )
    # The user moves one of the run's new shapes, and the shape the run moved, afterwards.
    history.append(env("relay:r", act("e9", "create_shape", **geo("n1", 900, 900))))
    history.append(env("relay:r", act("e10", "update_shape", id="a", y=70)))
    inverse = revert(history, "s-1", "r-1")
    assert inverse.left == ["n1", "a"]
    assert inverse.removed == ["n2"]
    now = canvas(history)
    assert now["n1"]["x"] == 900 and now["n1"]["y"] == 900  # where the user put it
    assert now["a"]["x"] == 50 and now["a"]["y"] == 70
    assert "n2" not in now


def test_a_revert_of_a_revert_redoes_the_run() -> None:
    history = base()
    history.append(
        env(
            "s-1",
            act("n", "create_shape", **geo("n", 0, 300, "new")),
            act("d", "delete_shape", ids=["b"]),
            act("u", "update_shape", id="c", x=999),
        )
    )
    after_run = copy.deepcopy(canvas(history))
    revert(history, "s-1", "r-1")
    assert "n" not in canvas(history) and "b" in canvas(history)
    redo = revert(history, "r-1", "r-2")
    assert redo.left == []
    assert canvas(history) == after_run
    assert list(canvas(history)) == list(after_run)
    undo_again = revert(history, "r-2", "r-3")
    assert undo_again.left == []
    assert canvas(history) == canvas(base())


def test_a_revert_of_a_run_reverted_already_does_nothing_and_names_nothing() -> None:
    history = base()
    history.append(env("s-1", act("n", "create_shape", **geo("n", 0, 300))))
    revert(history, "s-1", "r-1")
    again = revert(history, "s-1", "r-2")
    assert again.actions == [] and again.left == [] and again.touched == ["n"]


def test_a_withdrawn_partial_leaves_nothing_to_take_back() -> None:
    history = base()
    history.append(env("s-1", act("p", "create_shape", **geo("p", 0, 300)), partial=True))
    history.append(env("s-1", act("p", "think", text="canceled")))
    inverse = run_inverse(history, "s-1")
    assert inverse.found and inverse.actions == [] and inverse.touched == []


def test_partial_versions_count_as_their_final_version() -> None:
    history = base()
    history.append(env("s-1", act("p", "create_shape", **geo("p", 0, 300)), partial=True))
    history.append(env("s-1", act("p", "create_shape", **geo("p", 0, 333, "done"))))
    inverse = revert(history, "s-1", "r-1")
    assert inverse.removed == ["p"] and inverse.left == []
    assert canvas(history) == canvas(base())


def test_a_deleted_group_comes_back_parents_first_with_its_arrow_bound_again() -> None:
    history = base()
    history.append(
        env(
            "relay:r",
            act("g", "create_shape", id="g", type="group", x=0, y=0, rotation=0, props={}),
            act("ga", "update_shape", id="a", parentId="g"),
            act("gb", "update_shape", id="b", parentId="g"),
        )
    )
    history.append(
        env(
            "relay:r",
            act(
                "ar",
                "create_shape",
                id="ar",
                type="arrow",
                x=0,
                y=0,
                rotation=0,
                props={"start": {"x": 0, "y": 0}, "end": {"x": 10, "y": 10}},
                bindings={"start": "a", "end": "c"},
            ),
        )
    )
    before = copy.deepcopy(canvas(history))
    history.append(env("s-1", act("d", "delete_shape", ids=["g"])))
    assert "a" not in canvas(history) and canvas(history)["ar"]["bindings"]["start"] is None
    inverse = revert(history, "s-1", "r-1")
    creates = [str(a.params["id"]) for a in inverse.actions if a.name == "create_shape"]
    assert creates.index("g") < creates.index("a") and creates[-1] == "ar"
    assert canvas(history) == before
    assert list(canvas(history)) == list(before)


def test_the_live_canvas_decides_what_changed_since() -> None:
    history = base()
    history.append(env("s-1", act("n", "create_shape", **geo("n", 0, 300))))
    live = copy.deepcopy(canvas(history))
    live["n"]["x"] = 5  # an edit the history does not hold yet
    inverse = run_inverse(history, "s-1", current=live)
    assert inverse.left == ["n"] and inverse.actions == []


def test_an_unknown_run_is_not_found() -> None:
    inverse = run_inverse(base(), "s-404")
    assert not inverse.found and inverse.actions == []
