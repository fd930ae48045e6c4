"""`POST /api/canvas-agent/run` and `GET /api/canvas-agent/run/{session}` validate before
anything runs or is queued: API key, body limit, schema, model allowlist (fake backend)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer
from pydantic import SecretStr

from steward.api.app import MAX_BODY_BYTES, RUN_PATH, RunAccepted, RunRefused, create_app
from steward.config import Settings
from steward.protocol.box import Box
from steward.protocol.limits import MAX_ID_CHARS
from steward.service import StewardService

KEY = "unit-key-0123456789"
AUTH = {"Authorization": f"Bearer {KEY}"}


@dataclass
class QueueingBackend:
    """Queues every run it is given and reports it as queued."""

    settings: Settings
    runs: list[tuple[str, str, str | None, Box | None]] = field(default_factory=list)
    picked: list[tuple[str, ...]] = field(default_factory=list)

    async def run_http(
        self,
        room_id: str,
        message: str,
        model: str | None,
        viewport: Box | None,
        fairies: tuple[str, ...] = (),
    ) -> RunAccepted:
        if model == "refused":
            raise RunRefused(400, "model not allowed (see STEWARD_MODELS_ALLOWED)")
        self.runs.append((room_id, message, model, viewport))
        self.picked.append(fairies)
        return RunAccepted(f"s-{len(self.runs)}", "queued")

    async def run_state(self, session_id: str) -> dict[str, Any] | None:
        n = int(session_id[2:]) if session_id[2:].isdigit() else 0
        return {"session": session_id, "status": "queued"} if 0 < n <= len(self.runs) else None

    async def readiness(self) -> dict[str, Any]:
        return {"ready": True}

    async def rooms_overview(self, room_id: str | None) -> list[dict[str, Any]]:
        return []

    async def dev_token(self, room_id: str, identity: str) -> dict[str, str]:
        return {}


@pytest.fixture
async def api() -> AsyncIterator[tuple[TestClient[Any, Any], QueueingBackend]]:
    backend = QueueingBackend(Settings(steward_api_key=SecretStr(KEY)))
    client: TestClient[Any, Any] = TestClient(TestServer(create_app(backend)))
    await client.start_server()
    yield client, backend
    await client.close()


async def test_a_queued_run_answers_202_with_the_session_the_browsers_will_see(
    api: tuple[TestClient[Any, Any], QueueingBackend],
) -> None:
    client, backend = api
    body = {"roomId": "r1", "message": "draw", "viewport": {"x": 0, "y": 0, "w": 10, "h": 5}}
    r = await client.post(RUN_PATH, json=body, headers=AUTH)
    assert r.status == 202
    assert await r.json() == {
        "status": "queued",
        "session": "s-1",
        "sessionId": "s-1",
        "roomId": "r1",
    }
    assert backend.runs == [("r1", "draw", None, Box(x=0, y=0, w=10, h=5))]
    assert backend.picked == [()]
    body = {"roomId": "r1", "message": "draw", "fairies": ["fairy-2", "fairy-3"]}
    r = await client.post(RUN_PATH, json=body, headers=AUTH)
    assert r.status == 202
    assert backend.picked == [(), ("fairy-2", "fairy-3")]
    r = await client.get(f"{RUN_PATH}/s-1", headers=AUTH)
    assert r.status == 200 and (await r.json())["status"] == "queued"
    r = await client.get(f"{RUN_PATH}/s-9", headers=AUTH)
    assert r.status == 404


@pytest.mark.parametrize(
    ("headers", "body", "status", "error"),
    [
        ({}, {"roomId": "r", "message": "m"}, 401, "missing or wrong API key"),
        ({"Authorization": "Bearer nope"}, {"roomId": "r", "message": "m"}, 401, "wrong API key"),
        (AUTH, {"roomId": "r"}, 400, "message"),
        (AUTH, {"roomId": "", "message": "m"}, 400, "roomId"),
        (AUTH, {"roomId": "r" * (MAX_ID_CHARS + 1), "message": "m"}, 400, "roomId"),
        (AUTH, {"roomId": "r", "message": "m", "asker": "alice"}, 400, "asker"),
        (AUTH, {"roomId": "r", "message": "m", "model": "refused"}, 400, "model not allowed"),
        (AUTH, {"roomId": "r", "message": "m" * MAX_BODY_BYTES}, 413, "body over"),
        (AUTH, {"roomId": "r", "message": "m", "fairies": []}, 400, "fairies"),
        (AUTH, {"roomId": "r", "message": "m", "fairies": [""]}, 400, "fairies"),
        (AUTH, {"roomId": "r", "message": "m", "fairies": ["f"] * 11}, 400, "fairies"),
        (AUTH, {"roomId": "r", "message": "m", "fairies": "fairy-1"}, 400, "fairies"),
    ],
)
async def test_bad_runs_are_refused_and_nothing_is_queued(
    api: tuple[TestClient[Any, Any], QueueingBackend],
    headers: dict[str, str],
    body: dict[str, Any],
    status: int,
    error: str,
) -> None:
    client, backend = api
    r = await client.post(RUN_PATH, json=body, headers=headers)
    assert r.status == status
    assert error in (await r.json())["error"]
    assert backend.runs == []


async def test_reading_a_run_needs_the_key_and_a_sane_id(
    api: tuple[TestClient[Any, Any], QueueingBackend],
) -> None:
    client, _ = api
    assert (await client.get(f"{RUN_PATH}/s-1")).status == 401
    r = await client.get(f"{RUN_PATH}/{'s' * (MAX_ID_CHARS + 1)}", headers=AUTH)
    assert r.status == 400


@pytest.mark.parametrize("model", ["replay:/etc/hostname", "anthropic:unlisted", "../x", "a/b"])
async def test_the_service_refuses_unlisted_models_before_queueing(model: str) -> None:
    service = StewardService(Settings(steward_api_key=SecretStr(KEY)), fairies=False)
    # Not started (no database): a refused model never gets as far as the queue.
    with pytest.raises(RunRefused) as refused:
        await service.run_http("r", "draw", model, None)
    assert refused.value.status == 400
