"""`replay:<file>` streams a recorded response; the agent acts on it like on a live model."""

from __future__ import annotations

import json
from pathlib import Path

from steward.config import Settings
from steward.fairies.agent import AgentConfig, CanvasAgent
from steward.model.base import PREFILL, ModelRequest, Usage
from steward.model.registry import get_model
from steward.ports import PromptInput
from tests.support.fake_session import FakeSession

BODY = (
    '{"_type": "create", "intent": "", "shape": {"_type": "note", "shapeId": "n", "x": 1, '
    '"y": 2}}]}'
)


async def test_replay_jsonl_and_raw(tmp_path: Path) -> None:
    raw = tmp_path / "r.txt"
    raw.write_text(PREFILL + BODY)
    lines = tmp_path / "r.jsonl"
    lines.write_text(
        "\n".join(json.dumps({"text": BODY[i : i + 5]}) for i in range(0, len(BODY), 5))
    )
    for path in (raw, lines):
        model = get_model(f"replay:{path}", Settings())
        req = ModelRequest(system=["s"], user=[])
        assert "".join([c async for c in model.stream(req, Usage())]) == BODY


async def test_agent_runs_a_replay(tmp_path: Path) -> None:
    path = tmp_path / "r.txt"
    path.write_text(BODY)
    session = FakeSession()
    agent = CanvasAgent(AgentConfig(settings=Settings()))
    prompt = PromptInput(message="x", source="http", requester="t", model=f"replay:{path}")
    assert await agent.run(session, prompt) == "done"
    assert session.browser.shapes["n"]["type"] == "note"
