"""The browser's executor and the steward's reference applier compute the same page.

The parity scripts (client-bridge/test/parity/gen_fixtures.py) are run through the reference
now, and each step's action goes, as an envelope, through the bridge's own executor over a
real tldraw store (client-bridge/bench/executor-client.mjs, Node + jsdom); after every step
tldraw's page must agree with the reference's. A change to either side's apply of any verb
the scripts use goes red here. The committed verbs.json (what the vitest parity test reads)
must also be what the script writes now.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from steward_tools.rigs.executor_client import NodeExecutor, page_disagreements

GEN = Path(__file__).resolve().parents[2] / "client-bridge" / "test" / "parity" / "gen_fixtures.py"


def _gen() -> ModuleType:
    spec = importlib.util.spec_from_file_location("parity_gen_fixtures", GEN)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_fixtures_are_what_the_reference_computes_now() -> None:
    gen = _gen()
    assert gen.FIXTURES.read_text() == gen.render(), (
        "verbs.json is stale: run `uv run python client-bridge/test/parity/gen_fixtures.py`"
    )


async def _run_script(name: str, frames: list[dict[str, Any]]) -> list[str]:
    node = NodeExecutor(lambda _event: None)
    await node.start()
    try:
        problems: list[str] = []
        for i, frame in enumerate(frames):
            action = frame["action"]
            env = {
                "v": "tldraw-actions/1",
                "sessionId": name,
                "seq": i + 1,
                "ts": 0,
                "actions": [action],
            }
            await node.call("receive", envelopes=[env])
            page = (await node.call("page"))["page"]
            where = f"{name} step {i} ({action['name']})"
            problems += [f"{where}: {p}" for p in page_disagreements(page, frame["page"])]
        return problems
    finally:
        await node.close()


def test_the_bridge_executor_agrees_with_the_reference_after_every_step() -> None:
    fixtures = _gen().frames()
    assert fixtures and all(fixtures.values())

    async def run_all() -> list[list[str]]:
        async with asyncio.timeout(180):
            return await asyncio.gather(*(_run_script(n, f) for n, f in fixtures.items()))

    problems = [p for script in asyncio.run(run_all()) for p in script]
    assert not problems, "\n".join(problems[:20])


@pytest.mark.parametrize(
    ("page", "problem"),
    [
        (
            [
                {
                    "id": "a",
                    "type": "geo",
                    "x": 0.5,
                    "y": 0,
                    "rotation": 0,
                    "parentId": None,
                    "props": {"w": 1},
                }
            ],
            "a.x",
        ),
        (
            [
                {
                    "id": "a",
                    "type": "geo",
                    "x": 0,
                    "y": 0,
                    "rotation": 0,
                    "parentId": None,
                    "props": {"w": 2},
                }
            ],
            "a.props.w",
        ),
        ([], "ids"),
    ],
)
def test_the_comparison_can_fail(page: list[dict[str, Any]], problem: str) -> None:
    mirror = [{"id": "a", "type": "geo", "x": 0.0, "y": 0.0, "rotation": 0.0, "props": {"w": 1}}]
    assert any(p.startswith(problem) for p in page_disagreements(page, mirror)), json.dumps(page)
