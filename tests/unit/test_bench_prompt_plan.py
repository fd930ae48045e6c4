"""`steward bench latency`: which prompts are typed after a composing hint, and how the typed
and cold paths are reported apart."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from steward_tools.bench.harness import Marks
from steward_tools.bench.latency import prompt_paths, prompt_plan


def test_cold_prompts_alternate_with_typed_ones_and_typing_zero_means_all_cold() -> None:
    assert prompt_plan(4, 2, 1500) == [True, False, True, False, True, True]
    assert prompt_plan(1, 2, 1500) == [True, False, False]
    assert prompt_plan(3, 0, 1500) == [True, True, True]
    assert prompt_plan(3, 2, 0) == [False, False, False]


def test_typed_and_cold_prompts_are_reported_apart_with_their_context_source() -> None:
    marks = Marks()
    sources = {"s1": ["prefetched"], "s2": ["fetched", "cached"], "s3": ["prefetched"]}
    for n, sid in enumerate(sources):
        marks.prompt_received[sid] = 10.0 * n
        marks.model_request[sid] = 10.0 * n + (0.2 if sid == "s2" else 0.01)
    sessions = {
        sid: SimpleNamespace(figures=SimpleNamespace(context_sources=s))
        for sid, s in sources.items()
    }
    runtime: Any = SimpleNamespace(sessions=SimpleNamespace(sessions=sessions))
    out = prompt_paths(marks, runtime, ["s1", "s2", "s3"], [True, False, True], 1500)
    assert out["prompt_to_model_ms"]["n"] == 2 and out["prompt_to_model_ms"]["p95"] == 10.0
    assert out["prompt_to_model_cold_ms"] == {"p50": 200.0, "p95": 200.0, "p99": 200.0, "n": 1}
    assert out["context_sources"] == {"typed": {"prefetched": 2}, "cold": {"fetched": 1}}
    assert [r["context_source"] for r in out["prompts_detail"]] == [
        "prefetched",
        "fetched",
        "prefetched",
    ]
