"""A client's gap buffer: envelopes released in order, duplicates flagged, gaps found."""

from __future__ import annotations

from steward.protocol.messages import ActionEnvelope
from steward_tools.headless.gap_buffer import GapBuffer
from tests.support.wire import envelope as env
from tests.support.wire import text_action as action


def test_gap_buffer_releases_in_order_and_flags_duplicates() -> None:
    buf = GapBuffer()
    assert [e.seq for e in buf.offer(env(1)).ready] == [1]
    assert buf.offer(env(3)).held
    assert buf.offer(env(4)).held
    assert buf.offer(env(3)).duplicate  # already held
    assert buf.stalled(0.0, now=1e12) == {"s": 1}
    assert [e.seq for e in buf.offer(env(2)).ready] == [2, 3, 4]
    assert buf.offer(env(2)).duplicate and buf.offer(env(1)).duplicate
    assert buf.stalled(0.0) == {} and buf.last_seq("s") == 4
    assert [e.seq for e in buf.offer(env(1, "other")).ready] == [1]


def test_gap_buffer_treats_missing_trailing_envelopes_as_a_gap() -> None:
    buf = GapBuffer()
    e1 = ActionEnvelope(session_id="s", seq=1, actions=[action(1)], ts=0)
    buf.offer(e1, now=0.0)
    buf.expect("s", 3, now=10.0)  # the final status says the session ended at seq 3
    assert buf.stalled(1.0, now=10.5) == {}  # a retransmit may still come
    assert buf.stalled(1.0, now=11.5) == {"s": 1}
    buf.offer(ActionEnvelope(session_id="s", seq=2, actions=[action(2)], ts=0), now=12.0)
    assert buf.stalled(1.0, now=13.5) == {"s": 2}  # still short of 3
    buf.offer(ActionEnvelope(session_id="s", seq=3, actions=[action(3)], ts=0), now=14.0)
    assert buf.stalled(1.0, now=99.0) == {}
    buf.expect("s", 3, now=100.0)  # a repeated status: nothing missing
    assert buf.stalled(1.0, now=200.0) == {}
