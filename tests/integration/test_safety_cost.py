"""Cost: the running service checks the room's daily budget and records every run's usage,
through the real `anthropic:` provider against the local Messages server."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from steward.service import StewardService
from steward.store.database import Database
from steward_tools.livekit_server import LiveKitServer
from steward_tools.rigs.responders import PlanResponder
from tests.conftest import wait_for
from tests.support.anthropic_fake import FakeAnthropic, StartFake
from tests.support.room import close_all, join_clients, room_settings

pytestmark = pytest.mark.integration


@pytest.fixture
async def fake(start_fake_anthropic: StartFake) -> FakeAnthropic:
    return await start_fake_anthropic(responder=PlanResponder(chunk=40))


async def test_usage_is_recorded_and_the_budget_ends_runs_with_a_message(
    livekit_server: LiveKitServer, database: Database, fake: FakeAnthropic, room_name: str
) -> None:
    settings = room_settings(
        livekit_server,
        database.url,
        steward_model="anthropic:claude-sonnet-4",
        anthropic_api_key="test-key",
        anthropic_base_url=f"http://127.0.0.1:{fake.port}",
        steward_room_daily_budget_usd=0.0005,  # one run's worth here
    )
    service = StewardService(settings, database=database)  # the real agent, as in production
    await service.start(http=False)
    try:
        runtime = await service.join(room_name)
        (ann,) = await join_clients(livekit_server, room_name, ["ann"], runtime)
        try:
            with capture_logs() as logs:
                first = await ann.prompt("draw a box labelled signup")
                assert first.session_id and await ann.wait_status(first.session_id) == "done"
                await wait_for(lambda: any(e["event"] == "session_ended" for e in logs))
            (ended,) = [e for e in logs if e["event"] == "session_ended"]
            assert ended["models"] == ["anthropic:claude-sonnet-4"]
            assert ended["input_tokens"] > 0 and ended["output_tokens"] > 0
            assert ended["cost_usd"] > 0.0005
            row = await database.pool.fetchrow(
                "SELECT model, cost_usd FROM usage WHERE session_id = $1", first.session_id
            )
            assert row is not None and float(row["cost_usd"]) == pytest.approx(ended["cost_usd"])
            served = len(fake.requests)
            second = await ann.prompt("draw a circle")
            assert second.session_id and await ann.wait_status(second.session_id) == "error"
            await wait_for(lambda: any("daily model budget" in c.text for c in ann.chat))
            assert len(fake.requests) == served  # no model call over budget
            (view,) = await service.rooms_overview(room_name)
            assert view["budget_left_usd"] == 0
        finally:
            await close_all([ann])
    finally:
        await service.close()


async def test_fairy_turns_are_charged_per_role_model_and_stop_at_the_budget(
    livekit_server: LiveKitServer, database: Database, fake: FakeAnthropic, room_name: str
) -> None:
    settings = room_settings(
        livekit_server,
        database.url,
        steward_model="anthropic:claude-sonnet-4",
        steward_model_drone="anthropic:claude-haiku-4",
        anthropic_api_key="test-key",
        anthropic_base_url=f"http://127.0.0.1:{fake.port}",
        steward_room_daily_budget_usd=1.0,
    )
    service = StewardService(settings, database=database)
    await service.start(http=False)
    try:
        runtime = await service.join(room_name)
        (ann,) = await join_clients(livekit_server, room_name, ["ann"], runtime)
        try:
            first = await ann.prompt("project: draw a farm")
            assert first.session_id
            await ann.wait_status(first.session_id, timeout=90)
            rows = await database.pool.fetch(
                "SELECT model, count(*) AS n, sum(cost_usd) AS cost FROM usage"
                " WHERE room_id = $1 GROUP BY model",
                room_name,
            )
            by_model = {r["model"]: (int(r["n"]), float(r["cost"])) for r in rows}
            # The orchestrator's and the drones' calls, each priced at its own model's rate.
            assert set(by_model) == {"anthropic:claude-sonnet-4", "anthropic:claude-haiku-4"}
            assert all(n > 0 and cost > 0 for n, cost in by_model.values())
            # Spend the rest of the day's budget: the next fairy turn is refused, no call made.
            await database.pool.execute(
                "INSERT INTO usage (session_id, room_id, model, input_tokens, output_tokens,"
                " cache_read_tokens, cache_write_tokens, cost_usd)"
                " VALUES ('elsewhere', $1, 'x', 0, 0, 0, 0, 1.0)",
                room_name,
            )
            served = len(fake.requests)
            second = await ann.prompt("project: draw a harbour")
            assert second.session_id
            await wait_for(lambda: any("daily model budget" in c.text for c in ann.chat), 30)
            assert len(fake.requests) == served
        finally:
            await close_all([ann])
    finally:
        await service.close()
