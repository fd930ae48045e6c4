"""The one-shot agent is its asker's one-shotting fairy on the fairy runtime: its history is
written to real Postgres as it runs, comes back when a new runtime loads the room, and stays
off the roster (no fairies row, so no presence and never part of the crew)."""

from __future__ import annotations

import pytest

from steward.config import Settings
from steward.fairies.one_shot_runner import OneShotConfig, OneShotRunner
from steward.fairies.runtime import FairyRuntime
from steward.model.base import ModelRequest
from steward.model.scripted import ScriptedModel
from steward.ports import PromptInput
from steward.store.database import Database
from steward.store.fairies import FairyStore
from steward_tools.canned_model import CannedModel
from steward_tools.memory_session import MemorySession

pytestmark = pytest.mark.integration


def _recording() -> CannedModel:
    """The scripted model's answers, keeping every request."""
    scripted = ScriptedModel(tokens_per_s=None)
    return CannedModel(answer=lambda request: scripted.response_text(request.hints))


def _history_text(request: ModelRequest) -> str:
    return next(
        (b["text"] for b in request.user if str(b.get("text", "")).startswith("Earlier")), ""
    )


def _agent(runtime: FairyRuntime, model: CannedModel) -> OneShotRunner:
    settings = Settings(steward_model="scripted")
    return OneShotRunner(OneShotConfig(settings=settings, model=model, fairies=runtime))


async def test_one_shot_history_survives_a_runtime_reload_and_stays_off_the_roster(
    database: Database,
) -> None:
    store = FairyStore(database.pool)
    first = FairyRuntime(store=store)
    session = MemorySession(room_id="farm", session_id="s-alice-1")
    ask = PromptInput(
        message="draw a flow chart of our signup", source="browser", requester="alice"
    )
    assert await _agent(first, _recording()).run(session, ask) == "done"
    before = (await first.room("farm")).fairy("one-shot:alice").history
    assert any(i.action and i.action["name"] == "create" for i in before)

    # A new runtime (a restarted steward) loads the room from Postgres.
    second = FairyRuntime(store=store)
    room = await second.room("farm")
    fairy = room.fairy("one-shot:alice")
    assert [(i.id, i.kind, i.action, i.run) for i in fairy.history] == [
        (i.id, i.kind, i.action, i.run) for i in before
    ]
    assert fairy.asker == "alice"
    # When each item was made comes back too (it orders several askers' runs).
    assert all(
        abs(a.created - b.created) < 1e-3 for a, b in zip(fairy.history, before, strict=True)
    )
    assert "one-shot:alice" not in room.roster.fairies
    rows = await store.load_fairies("farm")
    assert rows and not any(r["fairy_id"].startswith("one-shot:") for r in rows)
    assert room.roster.message().fairies and all(
        not f.id.startswith("one-shot:") for f in room.roster.message().fairies
    )

    # Bob's one-shot prompt on the reloaded runtime sees alice's run as one line, and
    # alice's next prompt sees her own run in the response format.
    bob_model = _recording()
    bob = PromptInput(message="add a title", source="browser", requester="bob")
    bob_session = MemorySession(room_id="farm", session_id="s-bob-1")
    assert await _agent(second, bob_model).run(bob_session, bob) == "done"
    assert "[alice's run]" in _history_text(bob_model.requests[0])
    alice_model = _recording()
    again = PromptInput(message="make it blue", source="browser", requester="alice")
    alice_session = MemorySession(room_id="farm", session_id="s-alice-2")
    assert await _agent(second, alice_model).run(alice_session, again) == "done"
    mine = _history_text(alice_model.requests[0])
    assert "draw a flow chart of our signup" in mine and '"_type":"message"' in mine
    assert "[bob's run]" in mine
    # Each asker has a fairy of its own; both histories are in Postgres.
    assert len(await store.load_history("farm", "one-shot:bob")) == len(
        room.fairy("one-shot:bob").history
    )
