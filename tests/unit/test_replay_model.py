"""`replay:<file>` streams a recorded response; the agent acts on it like on a live model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from steward.config import Settings
from steward.fairies.one_shot_runner import OneShotConfig, OneShotRunner
from steward.model.base import PREFILL, ModelError, ModelRequest, Usage
from steward.model.registry import get_model
from steward.ports import PromptInput
from steward_tools.memory_session import MemorySession

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
    session = MemorySession()
    agent = OneShotRunner(OneShotConfig(settings=Settings()))
    prompt = PromptInput(message="x", source="http", requester="t", model=f"replay:{path}")
    assert await agent.run(session, prompt) == "done"
    assert session.browser.shapes["n"]["type"] == "note"


async def test_a_transcript_naming_fairies_answers_each_fairy_in_its_own_order(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t.jsonl"
    lines = [
        {"turn": 1, "fairy": "fairy-1", "text": "plan"},
        {"turn": 2, "fairy": "fairy-2", "text": "fence"},
        {"turn": 3, "fairy": "fairy-3", "text": "house"},
        {"turn": 4, "fairy": "fairy-2", "text": "fence review"},
        {"turn": 5, "text": "anyone"},
        {"turn": 6, "fairy": "fairy-3", "text": "house review"},
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))

    async def ask(fairy: str | None) -> str:
        hints = {"fairy": {"fairy_id": fairy}} if fairy else {}
        req = ModelRequest(system=["s"], user=[], hints=hints)
        model = get_model(f"replay:{path}", Settings())  # a model per run, as fairies build them
        return "".join([c async for c in model.stream(req, Usage())])

    # The drones ask out of the recorded order; each still gets its own lines, in order.
    assert await ask("fairy-1") == "plan"
    assert await ask("fairy-3") == "house"
    assert await ask("fairy-2") == "fence"
    assert await ask("fairy-2") == "fence review"
    # A line naming no fairy answers whoever asks next; a call naming none skips the others.
    assert await ask(None) == "anyone"
    with pytest.raises(ModelError, match=r"no turn 6$"):
        await ask(None)
    assert await ask("fairy-3") == "house review"
    with pytest.raises(ModelError, match="no turn 7 for fairy-2"):
        await ask("fairy-2")
