"""Packing actions into envelopes that fit, and fragments for those that do not
(room/outbound/envelopes)."""

from __future__ import annotations

from steward.protocol.limits import MAX_BATCH_BYTES, MAX_ENVELOPE_BYTES
from steward.protocol.messages import ActionEnvelope, EnvelopeBatch, WireAction
from steward.protocol.names import TOPIC_ACTION, TOPIC_ACTIONS
from steward.room.outbound.envelopes import (
    FragmentAssembler,
    envelopes_in,
    frames,
    is_fragment,
    pack,
)
from tests.support.wire import text_action as action


def test_packing_keeps_order_and_every_envelope_fits() -> None:
    actions = [action(i, text_len=300 + 40 * i) for i in range(60)]
    groups = pack("session-1", actions)
    assert len(groups) > 1
    assert [a.id for g in groups for a in g] == [a.id for a in actions]
    for seq, group in enumerate(groups, 1):
        env = ActionEnvelope(session_id="session-1", seq=seq, actions=group, ts=1.7e9)
        assert len(env.to_wire()) <= MAX_ENVELOPE_BYTES


def test_actions_that_fit_together_take_one_envelope_and_one_more_splits_them() -> None:
    actions = [action(i, text_len=200) for i in range(8)]
    assert pack("s", actions) == [actions]
    assert pack("s", []) == []
    # Right at the limit: one envelope exactly as long as the budget; a byte more splits it.
    worst = ActionEnvelope(session_id="s", seq=2**31 - 1, actions=actions, ts=9_999_999_999.999999)
    size = len(worst.to_wire())
    assert pack("s", actions, max_bytes=size) == [actions]
    split = pack("s", actions, max_bytes=size - 1)
    assert len(split) == 2 and [a for g in split for a in g] == actions
    assert len(pack("s", actions, max_actions=3)) == 3


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


def test_envelopes_travel_in_packets_under_the_batch_limit_in_order() -> None:
    sizes = [100, 5_000, 9_000, 1_500, 15_000, 300, 400]
    payloads = [
        ActionEnvelope(
            session_id="s",
            seq=i + 1,
            ts=0,
            actions=[WireAction(id=f"a{i}", name="think", params={"text": "x" * n})],
        ).to_wire()
        for i, n in enumerate(sizes)
    ]
    out = frames(payloads)
    assert len(out) >= 3 and any(end - start == 1 for start, end, _ in out)
    seqs = []
    for start, end, frame in out:
        assert len(frame) <= MAX_BATCH_BYTES
        if end < len(payloads):  # greedy: the next envelope would not have fitted
            assert len(frame) + len(payloads[end]) + 16 > MAX_BATCH_BYTES
        topic = TOPIC_ACTION if end - start == 1 else TOPIC_ACTIONS
        if topic == TOPIC_ACTIONS:
            EnvelopeBatch.model_validate_json(frame)  # the schema the browsers get
        seqs += [env["seq"] for env in envelopes_in(topic, frame)]
    assert seqs == list(range(1, len(sizes) + 1))
