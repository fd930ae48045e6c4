"""The latency bench's overhead split: before, during and after the outbox INSERT."""

from __future__ import annotations

from steward.protocol.messages import ActionEnvelope, WireAction
from steward.protocol.names import TOPIC_ACTION
from steward_tools.bench.harness import Marks


def _envelope(seq: int, action_id: str, partial: bool = False) -> str:
    action = WireAction(id=action_id, name="think", params={"text": "x"})
    env = ActionEnvelope(session_id="s", seq=seq, partial=partial or None, actions=[action], ts=0)
    return env.to_wire().decode()


def test_the_split_adds_up_and_leaves_the_insert_out_of_without_insert() -> None:
    marks = Marks()
    # a1: complete at 10.000, INSERT 10.001–10.003, handed over at 10.0035.
    marks.action_complete["a1"] = 10.000
    marks.appends.append((10.001, 10.003, _envelope(1, "a1")))
    marks.publishes.append((10.0035, TOPIC_ACTION, _envelope(1, "a1").encode()))
    # a2's preview was inserted earlier; only its final counts.
    marks.action_complete["a2"] = 20.000
    marks.appends.append((19.0, 19.5, _envelope(2, "a2", partial=True)))
    marks.appends.append((20.002, 20.004, _envelope(3, "a2")))
    marks.publishes.append((20.005, TOPIC_ACTION, _envelope(3, "a2").encode()))
    split = marks.overhead_split_ms()
    assert split["before_insert"]["p95"] == 2.0
    assert split["insert"]["p95"] == 2.0
    assert split["after_insert"]["p95"] == 1.0
    assert split["without_insert"]["p50"] == 1.5  # a1: 1 + 0.5
    assert split["without_insert"]["p95"] == 3.0  # a2: 2 + 1
    overhead = sorted(marks.overhead_ms())
    assert [round(v, 6) for v in overhead] == [3.5, 5.0]
