"""Packing actions into envelopes that fit, and fragments for those that do not (room/envelopes)."""

from __future__ import annotations

from steward.protocol.limits import MAX_ENVELOPE_BYTES
from steward.protocol.messages import ActionEnvelope
from steward.room.envelopes import FragmentAssembler, is_fragment, pack
from tests.support.wire import text_action as action


def test_packing_keeps_order_and_every_envelope_fits() -> None:
    actions = [action(i, text_len=300 + 40 * i) for i in range(60)]
    groups = pack("session-1", actions)
    assert len(groups) > 1
    assert [a.id for g in groups for a in g] == [a.id for a in actions]
    for seq, group in enumerate(groups, 1):
        env = ActionEnvelope(session_id="session-1", seq=seq, actions=group, ts=1.7e9)
        assert len(env.to_wire()) <= MAX_ENVELOPE_BYTES


def test_an_oversized_action_is_fragmented_never_dropped() -> None:
    big = action(1, text_len=20_000)  # ~80 KB of params with escapes and multi-byte chars
    groups = pack("s", [action(0), big, action(2)])
    frags = [g[0] for g in groups if is_fragment(g[0].params)]
    assert len(frags) >= 5
    assembler = FragmentAssembler()
    out = None
    for seq, group in enumerate(groups, 1):
        env = ActionEnvelope(session_id="s", seq=seq, actions=group, ts=1.7e9, partial=True)
        assert len(env.to_wire()) <= MAX_ENVELOPE_BYTES
        for a in group:
            if is_fragment(a.params):
                out = assembler.add(a.id, a.params) or out
    assert out == big.params
