"""The room's crew and a project's runs in the real Postgres (fixture `database`)."""

from __future__ import annotations

import asyncio

import pytest

from steward.store.crew import CrewMate, CrewRefused, CrewStore, active
from steward.store.database import Database
from steward.store.project_runs import ProjectRuns

pytestmark = pytest.mark.integration

DEFAULT = [
    CrewMate("fairy-1", 0, "Bramble", "violet", "orchestrator"),
    CrewMate("fairy-2", 1, "Clover", "green", "drone"),
    CrewMate("fairy-3", 2, "Fennel", "orange", "drone"),
]


async def test_a_room_that_never_chose_then_summons_renames_and_dismisses(
    database: Database,
) -> None:
    store = CrewStore(database.pool)
    assert await store.load("r") is None
    wisp = await store.summon(
        "r", DEFAULT, name="Wisp", personality="shy", color="blue", limit=4, by="ann"
    )
    assert (wisp.fairy_id, wisp.role, wisp.color) == ("fairy-4", "drone", "blue")
    crew = await store.load("r")
    assert crew is not None and [m.name for m in crew] == ["Bramble", "Clover", "Fennel", "Wisp"]
    assert await store.load("other-room") is None  # one room's choice is its own

    assert (await store.rename("r", DEFAULT, "fairy-4", "Moth")).name == "Moth"
    with pytest.raises(CrewRefused, match="full"):
        await store.summon("r", DEFAULT, name="Extra", personality="", color=None, limit=4, by="a")
    with pytest.raises(CrewRefused, match="already has a fairy named"):
        await store.rename("r", DEFAULT, "fairy-2", "moth")

    gone, lead = await store.dismiss("r", DEFAULT, "fairy-1", by="bob")
    assert gone.fairy_id == "fairy-1" and (lead.fairy_id, lead.role) == ("fairy-2", "orchestrator")
    crew = await store.load("r")
    assert crew is not None
    assert [(m.fairy_id, m.name, m.role) for m in active(crew)] == [
        ("fairy-2", "Clover", "orchestrator"),
        ("fairy-3", "Fennel", "drone"),
        ("fairy-4", "Moth", "drone"),
    ]
    with pytest.raises(CrewRefused, match="no fairy"):
        await store.rename("r", DEFAULT, "fairy-1", "Back")
    # A name a dismissed fairy had is free again; its id is not.
    again = await store.summon(
        "r", DEFAULT, name="Bramble", personality="", color=None, limit=4, by="ann"
    )
    assert again.fairy_id == "fairy-5"


async def test_summons_at_once_never_pass_the_limit(database: Database) -> None:
    store = CrewStore(database.pool)

    async def summon(i: int) -> str:
        try:
            mate = await store.summon(
                "r", DEFAULT, name=f"F{i}", personality="", color=None, limit=5, by="ann"
            )
        except CrewRefused:
            return "refused"
        return mate.fairy_id

    got = await asyncio.wait_for(asyncio.gather(*(summon(i) for i in range(6))), 30)
    assert sorted(g for g in got if g != "refused") == ["fairy-4", "fairy-5"]
    crew = await store.load("r")
    assert crew is not None and len(active(crew)) == 5


async def test_a_projects_asker_and_runs(database: Database) -> None:
    runs = ProjectRuns(database.pool)
    pool = database.pool
    await pool.execute("INSERT INTO rooms (room_id) VALUES ('r'), ('other')")

    async def session(sid: str, fairy: str | None, room: str = "r", ago_s: float = 0) -> None:
        await pool.execute(
            "INSERT INTO agent_sessions (session_id, room_id, fairy_id, source, model, status,"
            " created_at) VALUES ($1, $2, $3, 'system', 'scripted', 'done',"
            " now() - make_interval(secs => $4))",
            sid,
            room,
            fairy,
            ago_s,
        )

    await session("s-prompt", "fairy-1", ago_s=20)  # the prompt's run, before the project
    await session("s-earlier", "fairy-2", ago_s=15)  # a drone's run before the project
    await pool.execute(
        "INSERT INTO fairy_projects (project_id, room_id, title, kind, orchestrator, members,"
        " status, created_at) VALUES ('p1', 'r', 'Farm', 'orchestrated', 'fairy-1',"
        " '{fairy-2}', 'active', now() - interval '10 seconds')"
    )
    await runs.set_origin("p1", asker="ann", session_id="s-prompt")
    await session("s-lead", "fairy-1", ago_s=8)
    await session("s-drone", "fairy-2", ago_s=5)
    await session("s-stranger", "fairy-3", ago_s=5)  # not in the project
    await session("s-elsewhere", "fairy-2", room="other", ago_s=5)
    record = await runs.record("p1")
    assert record is not None
    assert (record.room_id, record.status, record.asker, record.session_id) == (
        "r",
        "active",
        "ann",
        "s-prompt",
    )
    assert await runs.runs("r", "p1") == ["s-prompt", "s-lead", "s-drone"]
    assert await runs.runs("other", "p1") == []
    assert await runs.record("nope") is None
    # Once it ended, later runs of its fairies are not the project's.
    await pool.execute("UPDATE fairy_projects SET status = 'done', updated_at = now()")
    await session("s-after", "fairy-2", ago_s=-5)
    assert await runs.runs("r", "p1") == ["s-prompt", "s-lead", "s-drone"]
