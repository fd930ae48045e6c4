"""What a revert reads from the outbox and says in the chat (`steward.room.runs.revert`)."""

from __future__ import annotations

from steward.canvas.inverse import RunInverse, run_inverse
from steward.protocol.messages import ActionEnvelope, WireAction
from steward.room.outbound.envelopes import pack
from steward.room.runs.revert import NAMED_IN_CHAT, describe, history_envelopes, reply_text
from steward.store.outbox import OutboxRow


def rows_of(session: str, actions: list[WireAction], start: int = 1) -> list[OutboxRow]:
    out = []
    for seq, group in enumerate(pack(session, actions), start):
        env = ActionEnvelope(session_id=session, seq=seq, actions=group, ts=0.0)
        out.append(OutboxRow(session, seq, seq, False, env.to_wire().decode()))
    return out


def test_an_action_split_into_fragments_is_read_back_whole() -> None:
    long_text = "x" * 40_000  # far past one envelope: sent as fragments
    big = WireAction(
        id="big",
        name="create_shape",
        params={"id": "n", "type": "text", "x": 0, "y": 0, "props": {"text": long_text}},
    )
    rows = rows_of("s-1", [big])
    assert len(rows) > 2
    history = history_envelopes(rows)
    whole = [a for env in history for a in env.actions]
    assert whole == [big]
    inverse = run_inverse(history, "s-1")
    assert inverse.removed == ["n"]


def test_the_reply_counts_what_was_taken_back_and_names_what_was_left() -> None:
    shapes = {
        "b1": {"id": "b1", "type": "geo", "props": {"text": "Verify email"}},
        "a1": {"id": "a1", "type": "arrow", "props": {"text": ""}},
    }
    inverse = RunInverse(removed=["x", "y"], restored=["z"], left=["b1", "a1"], found=True)
    said = reply_text(inverse, "run s-1", shapes)
    assert said == (
        "Took back run s-1: 3 shape changes. Left as they are, changed since the run: "
        'b1 (geo "Verify email"), a1 (arrow).'
    )
    assert reply_text(RunInverse(found=True), "run s-2", {}) == "Nothing of run s-2 to take back."


def test_a_long_list_of_shapes_left_is_cut_with_a_count() -> None:
    left = [f"s{i}" for i in range(NAMED_IN_CHAT + 5)]
    said = reply_text(RunInverse(removed=["x"], left=left, found=True), "run s-1", {})
    assert said.startswith("Took back run s-1: 1 shape change.")
    assert said.endswith("and 5 more.") and f"s{NAMED_IN_CHAT}," not in said
    assert describe("gone", None) == "gone"
