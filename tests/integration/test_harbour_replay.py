"""The harbour scenario answered by hand, replayed: the transcript in docs/real-model/harbour/
played by `replay:` in a real room (LiveKit, Postgres, the steward, two headless clients)
gives the canvas the hand-answered run ended with (final-canvas.json), identical in both
clients. Far from the origin, two users direct the room's crew: alice summons a fourth fairy
and picks all four for a café drawn as a plan from above and a street front from the side (a
project: a lead and its drones); bob picks all four for a harbour street seen from the side
(a project whose three drones all draw); alice picks two for a map of the harbour from above
(a duo: the lead draws too); then bob's one-shot adds awnings behind the shop signs and
alice's one-shot resizes the lighthouse and moves the boat. Each fairy takes its own answers
whatever order they ask in."""

from __future__ import annotations

from pathlib import Path

import pytest

from steward.config import PROJECT_ROOT
from steward.protocol.box import Box
from steward.protocol.messages import SummonRequest
from steward.protocol.names import RPC_SUMMON
from steward.store.database import Database
from steward_tools.headless.client import HeadlessClient
from steward_tools.livekit_server import LiveKitServer
from tests.conftest import wait_for
from tests.support.recorded_canvas import ReplayRoom, assert_same_canvas, replayed_room
from tests.support.room import converged

pytestmark = pytest.mark.integration

HARBOUR = PROJECT_ROOT / "docs" / "real-model" / "harbour"
CREW = ["fairy-1", "fairy-2", "fairy-3", "fairy-4"]
# Where each tab looked when it asked (page coordinates, as the hand-answered run's tabs).
CAFE_VIEW = Box(x=-42479.5, y=26600, w=959, h=800)
STREET_VIEW = Box(x=39648.5, y=-24384, w=703, h=768)
MAP_VIEW = Box(x=39520.5, y=-23300, w=959, h=800)
CAFE = (
    "draw a small corner café in two drawings side by side: on the left its floor plan seen "
    "from above (counter, kitchen, four tables with chairs, the entrance door), on the right "
    "its street front seen from the side (door, two big windows, a sign over the door, the "
    "pavement)"
)
STREET = (
    "draw a harbour street seen from the side, from left to right: a lighthouse, a fishing "
    "boat moored at the quay, and a row of three shops, each with a door, a window and a "
    "sign, all standing on one quay line above the water"
)
MAP = (
    "draw a map of the harbour seen from above: the quay along the top, the water below it, "
    "a pier reaching into the water with the lighthouse at its end, the fishing boat at its "
    "mooring beside the pier, and the three shops in a row on the quay"
)
AWNINGS = "add a red awning over each shop window, and put the shop signs in front of the awnings"
EDIT = (
    "make the lighthouse on the map twice as big, keeping it at the end of the pier, and "
    "move the fishing boat a little closer to the pier"
)


async def _projects_done(replay: ReplayRoom, count: int) -> None:
    """Every project of the room's board done, `count` of them; canvases converged."""
    assert replay.service.fairies is not None
    board = replay.service.fairies.rooms[replay.room_id].board
    await wait_for(
        lambda: (
            len(board.projects) == count
            and all(p.status == "done" for p in board.projects.values())
        ),
        timeout=90,
    )
    # A finished project's fairies go back to idling a moment after the board says done; a
    # person picks them again seconds later, the test as soon as they are free.
    crew = replay.service.fairies.rooms[replay.room_id].roster.fairies
    await wait_for(lambda: all(f.mode == "idling" for f in crew.values()), timeout=30)
    await converged(replay.runtime, replay.clients)


async def _one_shot(client: HeadlessClient, message: str) -> None:
    reply = await client.prompt(message)
    assert reply.session_id, reply.error
    assert await client.wait_status(reply.session_id, timeout=30) == "done"


async def test_the_harbour_transcript_replays_to_the_same_canvas(
    livekit_server: LiveKitServer, database: Database, tmp_path: Path
) -> None:
    views = {"alice": CAFE_VIEW, "bob": STREET_VIEW}
    async with replayed_room(livekit_server, database, HARBOUR, tmp_path, views) as replay:
        alice, bob = replay.clients
        summoned = await alice.room.local_participant.perform_rpc(
            destination_identity=alice.steward_identity,
            method=RPC_SUMMON,
            payload=SummonRequest(
                name="Moss", personality="patient and tidy, likes straight lines", color="green"
            )
            .to_wire()
            .decode(),
        )
        assert '"fairy-4"' in summoned, summoned

        cafe = await alice.prompt(CAFE, fairies=CREW)
        assert cafe.session_id, cafe.error
        await _projects_done(replay, 1)

        street = await bob.prompt(STREET, fairies=CREW)
        assert street.session_id, street.error
        await _projects_done(replay, 2)

        await alice.set_view(MAP_VIEW)
        await wait_for(lambda: replay.runtime.views.get("alice").viewport == MAP_VIEW)  # type: ignore[union-attr]
        duo = await alice.prompt(MAP, fairies=CREW[1:3])
        assert duo.session_id, duo.error
        await _projects_done(replay, 3)

        await _one_shot(bob, AWNINGS)
        await _one_shot(alice, EDIT)

        shapes = await converged(replay.runtime, replay.clients)
        assert_same_canvas(shapes, HARBOUR / "final-canvas.json")
        assert bob.shapes == alice.shapes == shapes
