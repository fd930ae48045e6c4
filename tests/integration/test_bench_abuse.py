"""`steward bench abuse`: every attack refused and logged, nothing accepted, no crash, the
honest user's prompt completes, memory bounded (its own livekit-server and Postgres)."""

from __future__ import annotations

import pytest

from steward.bench.abuse import run_bench

pytestmark = pytest.mark.integration


async def test_the_abuse_bench_meets_its_targets() -> None:
    result = await run_bench(fuzz_per_path=0)
    assert result["attempts"] >= 20
    assert result["accepted_wrongly"] == 0, [r for r in result["results"] if r["accepted_wrongly"]]
    assert result["refused_and_logged"] == result["attempts"], result["not_logged"]
    assert result["crashes"] == 0, result.get("crash_examples")
    assert result["honest_prompt_ok"]
    assert result["rss_mb_growth"] <= 32
    assert "mallory" in result["muted"]
