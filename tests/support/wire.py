"""Wire actions and envelopes the room tests build."""

from __future__ import annotations

from steward.protocol.messages import ActionEnvelope, WireAction


def text_action(i: int, text_len: int = 100) -> WireAction:
    """Action `a<i>` creating text `s<i>`: `text_len` times a quote and a two-byte letter."""
    return WireAction(
        id=f"a{i}",
        name="create_shape",
        params={"id": f"s{i}", "type": "text", "x": i, "y": 0, "props": {"text": 'é"x' * text_len}},
    )


def envelope(seq: int, session: str = "s") -> ActionEnvelope:
    return ActionEnvelope(session_id=session, seq=seq, actions=[], ts=0.0)
