"""Usage rows and the per-room daily budget, in the real Postgres."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from steward.config import Settings
from steward.fairies.one_shot_runner import OneShotConfig, OneShotRunner
from steward.model.base import Usage, estimate_cost
from steward.ports import PromptInput
from steward.store.database import Database
from steward.store.usage import UsageRepo
from steward_tools.memory_session import MemorySession

pytestmark = pytest.mark.integration


async def test_records_and_sums_per_room_and_day(database: Database) -> None:
    repo = UsageRepo(database.pool)
    u = Usage(input_tokens=1000, output_tokens=200, cache_read_tokens=300, cache_write_tokens=50)
    cost = estimate_cost("anthropic:claude-sonnet-4", u)
    assert cost == pytest.approx((1000 * 3 + 200 * 15 + 300 * 0.3 + 50 * 3.75) / 1e6)
    await repo.record(session_id="s1", room_id="r1", model="anthropic:x", usage=u, cost_usd=cost)
    await repo.record(session_id="s2", room_id="r1", model="anthropic:x", usage=u, cost_usd=cost)
    await repo.record(session_id="s3", room_id="r2", model="anthropic:x", usage=u, cost_usd=1.0)
    assert await repo.spent_today("r1") == pytest.approx(2 * cost, abs=1e-6)
    assert await repo.spent_today("r2") == pytest.approx(1.0)
    tomorrow = datetime.now(UTC) + timedelta(days=1)
    assert await repo.spent_today("r1", now=tomorrow) == 0
    totals = await repo.session_totals("s1")
    assert (totals.input_tokens, totals.cache_read_tokens) == (1000, 300)


async def test_budget_refuses_new_runs_with_a_clear_message(database: Database) -> None:
    repo = UsageRepo(database.pool)
    settings = Settings(steward_room_daily_budget_usd=0.5)
    agent = OneShotRunner(OneShotConfig(settings=settings, usage=repo, tokens_per_s=0))
    session = MemorySession(room_id="busy")
    prompt = PromptInput(message="draw a circle", source="browser", requester="alice")
    assert await agent.run(session, prompt) == "done"
    row = await database.pool.fetchrow("SELECT * FROM usage WHERE room_id = 'busy'")
    assert row is not None and row["model"] == "scripted" and row["output_tokens"] > 0
    await repo.record(
        session_id="x", room_id="busy", model="anthropic:x", usage=Usage(), cost_usd=0.6
    )
    refused = MemorySession(room_id="busy", session_id="s2")
    outcome = await agent.run(refused, prompt)
    assert outcome == "error: budget exceeded"
    assert "daily model budget" in refused.chats[0][1] and refused.envelopes == []
    assert refused.context_requests == []
