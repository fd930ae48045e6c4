"""Collector pauses are timed per generation and reach /metrics."""

from __future__ import annotations

import gc

from prometheus_client import REGISTRY

from steward.obs.gc_pauses import GcPauses, watch_gc_pauses


def test_full_collections_are_timed_and_counted() -> None:
    pauses = watch_gc_pauses()
    assert watch_gc_pauses() is pauses
    assert gc.callbacks.count(pauses.callback) == 1
    before = REGISTRY.get_sample_value("steward_gc_pause_seconds_count", {"generation": "2"}) or 0
    pauses.reset()
    junk = [[i] for i in range(50_000)]  # something for the pass to walk
    gc.collect(2)
    del junk
    summary = pauses.summary()
    n = summary["2"]["n"]  # ours, and any the allocation above set off itself
    assert n >= 1
    assert 0 < summary["2"]["max_ms"] <= summary["2"]["total_ms"]
    after = REGISTRY.get_sample_value("steward_gc_pause_seconds_count", {"generation": "2"})
    assert after == before + n
    pauses.reset()
    assert pauses.summary() == {}


def test_a_collection_at_the_edge_of_the_recursion_limit_raises_nothing() -> None:
    # As in CI: a collection set off inside the fuzz tests' `json.dumps` of a value nested
    # 2,000 deep ran the callback with one frame to spare, and `max()` in it raised.
    pauses = GcPauses()
    raised_at: list[int] = []

    def descend(depth: int) -> None:
        try:
            descend(depth + 1)
        except RecursionError:
            pass
        pauses.callback("start", {"generation": 2})
        try:
            pauses.callback("stop", {"generation": 2})
        except RecursionError:
            raised_at.append(depth)

    descend(0)
    # Only where not even the callback's own frame fits may a call fail, and there the
    # "start" call fails first, so "stop" never raises.
    assert raised_at == []
    assert pauses.summary()["2"]["n"] >= 1
