"""A tab's first packets count as its own, over the real stack (livekit-server, Postgres, the
steward serving the demo page, Chromium tabs on it).

A tab publishes its view the moment it is on the page. The server sends data over the data
channel and a join over the signal connection, and may batch a join for up to 3 s, so a
packet sent at once can reach the steward before the join: the steward cannot tell whose it
is (the SDK knows no participant for it) and must refuse it. The client holds what it sends
until its own announcement (its capabilities attribute, which the server passes on at once)
is through.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from steward.store.database import Database
from steward_tools.livekit_server import LiveKitServer
from tests.conftest import wait_for
from tests.support.tabs import served_tabs

pytestmark = pytest.mark.integration

TABS = ("alice", "bob", "carol")


async def test_first_views_of_joining_tabs_reach_the_steward_as_theirs(
    livekit_server: LiveKitServer, database: Database, room_name: str, tmp_path: Path
) -> None:
    async with served_tabs(
        livekit_server,
        database,
        room_name,
        model="anthropic:never-asked",
        model_url="http://127.0.0.1:9",
        tabs=[f"{name}:1024x700" for name in TABS],
        out=tmp_path,
    ) as (_, runtime, _tabs):
        # Nobody pans: each view the steward has is the one its tab sent on arrival.
        await wait_for(lambda: all(runtime.views.get(n) is not None for n in TABS), timeout=20)
        assert [r for r in runtime.inbound.rejected if r[2] == "no_sender"] == []
