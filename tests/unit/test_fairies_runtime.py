"""A whole project with the scripted model, in process (no room, no database)."""

from __future__ import annotations

from steward.canvas.bounds import shape_bounds
from steward.fairies.runtime import FairyRuntime
from steward.ports import PromptInput
from steward.turns.bounds_guard import belongs
from steward_tools.memory_session import MemoryRoom, MemorySession, MemorySessions
from tests.support.drone_counts import planned_per_task


async def test_orchestrator_plans_drones_draw_in_parallel_and_it_ends() -> None:
    browser = MemoryRoom()
    runtime = FairyRuntime(sessions=MemorySessions(browser))
    session = MemorySession(browser, room_id="room-a", fairy="lead")
    outcome = await runtime.run(
        session, PromptInput(message="draw a farm", source="browser", requester="u")
    )
    assert outcome == "done"
    room = runtime.rooms["room-a"]
    (project,) = room.board.projects.values()
    assert project.status == "done" and len(project.members) == 2
    tasks = room.board.project_tasks(project.id)
    assert len(tasks) >= 2 and all(t.status == "done" for t in tasks)
    # Each drone drew only inside its own task area, in its own session.
    for t in tasks:
        mine = [s for s in browser.canvas.shapes.values() if s["id"].startswith(t.id + "-")]
        assert len(mine) == planned_per_task(room.board)[t.id]
        assert t.bounds is not None
        assert all(belongs(shape_bounds(s), t.bounds) for s in mine)
    drawing = {
        sid for sid, _, _, acts in browser.sent if any(a.name == "create_shape" for a in acts)
    }
    assert len(drawing) == 2 and session.session_id not in drawing  # orchestrators never draw
    order = [sid for sid, _, _, acts in browser.sent if sid in drawing]
    first_b = order.index(sorted(drawing)[1])
    assert sorted(drawing)[0] in order[first_b:], "the two drones should stream in parallel"
    for sid in drawing:  # each drone session keeps its own seq
        seqs = [seq for s, seq, _, _ in browser.sent if s == sid]
        assert seqs == list(range(1, len(seqs) + 1))
    assert {f.mode for f in room.roster.fairies.values()} == {"idling"}
    summary = runtime.project_summary("room-a")
    assert summary is not None and summary["status"] == "done" and summary["tasks"] == 2
    assert summary["drone_actions"] > 0 and summary["orchestrator_actions"] > 0
    assert summary["history_tokens_orchestrator"] < summary["history_tokens_unfiltered"]
