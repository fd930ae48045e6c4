"""The room's canvas mirror: partial versions kept and reverted per session."""

from __future__ import annotations

from steward.canvas.mirror import CanvasMirror
from steward.protocol.messages import WireAction


def test_mirror_reverts_partial_versions_per_session() -> None:
    r = CanvasMirror()
    base = {"id": "b", "type": "geo", "x": 0, "y": 0, "props": {"w": 10, "h": 10, "text": "S"}}
    r.apply_one(WireAction(id="a", name="create_shape", params=base), partial=True, session="s")
    grown = {**base, "props": {**base["props"], "text": "Sign"}}
    r.apply_one(WireAction(id="a", name="create_shape", params=grown), partial=True, session="s")
    assert r.in_flight("s") == ["a"] and r.in_flight("other") == []
    # The same action id in another session is another action.
    r.apply_one(WireAction(id="a", name="think", params={"text": "x"}), session="other")
    assert r.in_flight("s") == ["a"] and "b" in r.shapes
    r.apply_one(WireAction(id="a", name="think", params={"text": "canceled"}), session="s")
    assert r.shapes == {} and r.in_flight("s") == []
