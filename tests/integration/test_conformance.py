"""Conformance over the real stack: every mode answered by a model that knows only what its
request says, through the real `anthropic:` and `openai:` providers and local servers speaking
their protocols (Messages, Chat Completions).

Property: schema-valid outputs drawn from each request's own response schema (ids of shapes
it was shown, coordinates inside the bounds it was given, random chunkings) are each applied
or refused with a logged reason, nothing crashes, three clients end identical, and what the
fairies draw while working a task stays inside its area. Every request carries its schema,
and a screenshot in every mode that may see.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from steward.fairies.modes import MODES, WORKING_MODES
from steward.service import StewardService
from steward.store.database import Database
from steward_tools.bench.conformance import (
    ConformanceModel,
    exercise,
    may_see,
    model_server,
    model_settings,
)
from steward_tools.livekit_server import LiveKitServer
from tests.support.room import room_settings

pytestmark = pytest.mark.integration

TARGET = 150


@pytest.fixture(params=["anthropic", "openai"])
async def served(
    request: pytest.FixtureRequest,
) -> AsyncIterator[tuple[ConformanceModel, dict[str, Any]]]:
    """The model, behind a local server speaking each provider's protocol."""
    model = ConformanceModel(seed=11)
    server = model_server(request.param, model)
    settings = model_settings(request.param, await server.start())
    yield model, settings
    await server.stop()


async def test_every_mode_answers_from_its_own_request(
    livekit_server: LiveKitServer,
    database: Database,
    served: tuple[ConformanceModel, dict[str, Any]],
) -> None:
    model, model_env = served
    settings = room_settings(
        livekit_server, database.url, steward_context_timeout_s=3.0, **model_env
    )
    service = StewardService(settings, database=database)
    await service.start(http=False)
    try:
        result = await exercise(service, livekit_server, model, TARGET)
    finally:
        await service.close()
    assert result["crashes"] == 0, result["crash_samples"]
    assert set(result["statuses"]) == {"done"}, result["statuses"]
    assert result["canvases_identical"]
    # Every mode in which a model turn runs was reached, each with sampled outputs.
    generating = {name for name, m in MODES.items() if m.generates}
    assert generating <= set(result["modes"]), result["modes"]
    assert all(result["modes"][m]["outputs"] > 0 for m in generating), result["modes"]
    assert result["outputs"] >= TARGET
    # Every request carried its schema; every mode that may see got its screenshot.
    assert result["requests_without_schema"] == 0, result["modes"]
    assert result["requests_without_screenshot"] == 0, result["modes"]
    assert any(may_see(m) for m in generating)
    # Each complete action (sampled, plus the plan's steering ones) was applied or refused,
    # and every refusal was logged with its reason.
    assert result["applied"] > 0 and result["refused"] > 0
    assert result["applied"] + result["refused"] >= result["outputs"]
    assert result["refused_unlogged"] == 0 and result["refusal_reasons"]
    # Fairies working a task drew inside its area.
    assert result["task_shapes_checked"] > 0
    assert result["task_shapes_outside_bounds"] == 0
    # A working fairy's request told it its task area (the bounds the sampler drew in).
    working = [v for v in model.views if v.mode in WORKING_MODES]
    assert working and all(v.bounds is not None for v in working)
