"""Live fuzzing through the real transport (real livekit-server, real Postgres): a hostile
participant floods one room on every inbound path while another room is served."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from steward.fairies.one_shot_runner import OneShotConfig, OneShotRunner
from steward.service import StewardService
from steward.store.database import Database
from steward_tools.bench.fuzz_live import fuzz_live
from steward_tools.livekit_server import LiveKitServer
from tests.support.room import room_settings

pytestmark = pytest.mark.integration

PATHS = {
    "data:agent:ack",
    "data:canvas:viewport",
    "data:canvas:edit",
    "data:steward:resync",
    "rpc:steward.prompt",
    "rpc:steward.cancel",
    "stream:agent:context",
    "stream:agent:screenshot",
    "reply:steward.context",
    "text:lk.transcription",
    "http:run",
}


@pytest.fixture
async def steward(
    livekit_server: LiveKitServer, database: Database
) -> AsyncIterator[StewardService]:
    settings = room_settings(livekit_server, database.url, steward_model="scripted")
    agent = OneShotRunner(OneShotConfig(settings=settings, tokens_per_s=None))
    service = StewardService(settings, database=database, runner=lambda: agent)
    await service.start(http=True)
    yield service
    await service.close()


async def test_hostile_room_never_crashes_the_steward_and_the_other_room_completes(
    steward: StewardService, livekit_server: LiveKitServer
) -> None:
    result = await fuzz_live(steward, livekit_server, per_path=12, seed=7, limit_s=40)
    assert result["crashes"] == 0, result.get("crash_examples")
    assert not result["timed_out"]
    # No send waits out its bound: once the steward revokes the hostile's data rights, what
    # it still sends is counted as refused by revocation, not left hanging.
    assert not result["hung"], result["hung"]
    # Every inbound path was exercised, and something on each refused path was refused.
    assert PATHS <= set(result["by_path"]), result["by_path"]
    assert result["rejected"] > 0
    # Every refusal was logged with its reason (log lines == counted refusals).
    assert result["rejections_unlogged"] == 0, (result["rejected"], result["reasons"])
    assert result["rejections_logged"] == result["rejected"]
    reasons = set(result["reasons"])
    assert {"invalid_json", "schema", "oversize", "unexpected_stream", "unauthorized"} <= reasons
    # Room B got a complete run with identical canvases; room A still serves.
    assert result["other_room_ok"], result["other_room"]
    assert result["other_room"]["identical"] and result["other_room"]["shapes"] > 0
    assert result["room_a_after"] == "done"
