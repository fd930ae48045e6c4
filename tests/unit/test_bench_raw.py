"""`steward bench latency` against raw LiveKit delivery: the probe packet, the slowest-client
delivery time per probe, and the p95-over-p95 ratios."""

from __future__ import annotations

from steward_tools.bench.raw import against_raw, ratio, slowest_delivery_ms
from steward_tools.rigs.raw_probe import (
    ECHO_BYTES,
    echo_payload,
    echo_wanted,
    probe_id,
    probe_payload,
)


def test_a_probe_has_the_asked_size_and_carries_its_id() -> None:
    payload = probe_payload("r7", 503)
    assert len(payload) == 503
    assert probe_id(payload) == "r7"
    assert len(probe_payload("r123456", 5)) > 5  # never shorter than its id needs
    assert probe_id(b"not json") is None


def test_only_a_probe_that_asks_for_an_echo_gets_one_and_echoes_ask_for_none() -> None:
    asking = probe_payload("f3-1", 600, echo=True)
    assert len(asking) == 600 and echo_wanted(asking) == "f3-1"
    assert echo_wanted(probe_payload("r1", 600)) is None
    echo = echo_payload("f3-1")
    assert len(echo) == ECHO_BYTES and probe_id(echo) == "f3-1" and echo_wanted(echo) is None
    assert echo_wanted(b"[1, 2]") is None and echo_wanted(b'{"probe": 5, "echo": 1}') is None
    assert probe_id(b'{"probe": 3}') is None
    assert probe_id(b"[1, 2]") is None


def test_delivery_is_timed_to_the_slowest_client_and_losses_are_counted() -> None:
    sent = {"r0": 1.000, "r1": 2.000, "r2": 3.000}
    received = {
        "a": {"r0": 1.004, "r1": 2.010, "r2": 3.001},
        "b": {"r0": 1.006, "r1": 2.002},  # never got r2
    }
    times, missing = slowest_delivery_ms(sent, received)
    assert [round(t, 3) for t in times] == [6.0, 10.0]
    assert missing == 1
    assert slowest_delivery_ms(sent, {}) == ([], 3)


def test_ratios_are_p95_over_p95_and_absent_when_a_side_is_missing() -> None:
    figures = {"e2e_ms": {"p95": 30.0}, "overhead_ms": {"p95": 2.0}}
    raw = [float(n) for n in range(1, 21)]  # p95 by nearest rank: 19
    out = against_raw(figures, raw, 2)
    assert out["raw_ms"] == {"p50": 10.0, "p95": 19.0, "p99": 20.0, "n": 20}
    assert out["raw_not_delivered_everywhere"] == 2
    assert out["e2e_over_raw"] == round(30.0 / 19.0, 2) == 1.58
    assert out["overhead_over_raw"] == round(2.0 / 19.0, 2) == 0.11
    empty = against_raw(figures, [], 0)
    assert empty["raw_ms"]["p95"] is None
    assert empty["e2e_over_raw"] is None and empty["overhead_over_raw"] is None
    assert ratio(None, 3.0) is None and ratio(3.0, 0.0) is None and ratio(3, 2) == 1.5
