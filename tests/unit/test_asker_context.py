"""Whose view a run sees: the asker's own browser, else the host rendering the asker's
published viewport, else (no browser behind the prompt) the host's view with a note; the
asker's own edits since the agent last looked. Browsers are plain fakes of `perform_rpc`
that feed the stream inbox directly."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from livekit import rtc

from steward.canvas.mirror import CanvasMirror
from steward.config import Settings
from steward.fairies.one_shot_runner import OneShotConfig, OneShotRunner
from steward.ports import PromptInput
from steward.protocol.box import Box
from steward.protocol.messages import ContextCounts, ContextReply, ViewportUpdate
from steward.protocol.names import ATTR_CAPABILITIES, TOPIC_CONTEXT, TOPIC_SCREENSHOT
from steward.room.context.snapshot_fetcher import SnapshotFetcher
from steward.room.context.views import Views
from steward.room.inbound.stream_inbox import StreamInbox
from steward.room.inbound.user_edits import UserEdits
from steward.room.participants import Participants
from steward_tools.canned_model import CannedModel
from steward_tools.memory_session import MemoryRoom, MemorySession
from tests.support.context_rigs import stream_to

WEBP = b"RIFF\x04\x00\x00\x00WEBPVP8 "
ALL = "context,screenshot,apply"


@dataclass
class Browser:
    viewport: Box
    selection: list[str] = field(default_factory=list)
    changes: list[dict[str, Any]] = field(default_factory=list)
    fail: bool = False
    garbage: bool = False  # answers with a reply no honest browser sends


class Room:
    """alice (host), bob and carol: browsers with their own cameras and selections; dave is a
    voice agent with no canvas; erin applies envelopes but never answers context."""

    def __init__(self, *, browser_changes: bool = False) -> None:
        self.participants = Participants()
        self.browsers = {
            "alice": Browser(Box(x=0, y=0, w=1280, h=800), ["a"]),
            "bob": Browser(Box(x=2000, y=500, w=900, h=600), ["b"]),
            "carol": Browser(Box(x=-800, y=-400, w=640, h=480), ["c"]),
        }
        for n, name in enumerate(self.browsers, start=1):
            self.participants.joined(name, n, {ATTR_CAPABILITIES: ALL})
        self.participants.joined("dave", 10, {"steward.role": "voice"})
        self.participants.joined("erin", 11, {ATTR_CAPABILITIES: "apply"})
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.inbox = StreamInbox(lambda *a: None)
        self.views = Views()
        self.edits = UserEdits()
        self.fetcher = SnapshotFetcher(
            "room",
            self.perform_rpc,
            self.participants,
            self.inbox,
            CanvasMirror(),
            lambda: 0,
            timeout_s=0.3,
            attempts=1,
            cache_ttl_s=0.0,
            prefetch_ttl_s=15.0,
            views=self.views,
            edits=self.edits,
            browser_changes=browser_changes,
        )

    async def perform_rpc(self, *, destination_identity: str, payload: str, **_: Any) -> str:
        req = json.loads(payload)
        self.calls.append((destination_identity, req))
        browser = self.browsers[destination_identity]
        if browser.fail:
            raise rtc.RpcError(1500, "context unavailable")
        if browser.garbage:
            return '{"requestId": 7}'
        rid, sender = req["requestId"], destination_identity
        stream_to(self.inbox, rid, sender, TOPIC_CONTEXT, "application/json", b"[]")
        stream_to(self.inbox, rid, sender, TOPIC_SCREENSHOT, "image/webp", WEBP)
        changes = None
        if "user_changes" in req["want"]:
            changes, browser.changes = browser.changes, []
        return (
            ContextReply(
                request_id=req["requestId"],
                viewport=browser.viewport,
                selection=browser.selection,
                doc_version=1,
                counts=ContextCounts(shapes=0),
                streams=["screenshot", "shapes"],
                user_changes=changes,
            )
            .to_wire()
            .decode()
        )

    def publish_view(self, identity: str, viewport: Box, selection: list[str]) -> None:
        update = ViewportUpdate(viewport=viewport, selection=selection, ts=0.0)
        self.fetcher.cache.viewport_changed(identity, self.views.update(identity, update))


@pytest.fixture
def room() -> Room:
    return Room()


async def test_a_browser_prompt_sees_its_own_browser_view_and_selection(room: Room) -> None:
    ctx = await room.fetcher.fetch(asker="bob", source="browser")
    assert [c[0] for c in room.calls] == ["bob"]
    assert room.calls[0][1].get("bounds") is None  # bob renders his own camera
    assert ctx.source_identity == "bob" and ctx.asker == "bob"
    assert ctx.viewport == room.browsers["bob"].viewport and ctx.selection == ["b"]
    assert ctx.screenshot == WEBP and ctx.view_note is None


async def test_when_the_askers_browser_fails_the_host_renders_the_askers_view(room: Room) -> None:
    bob = room.browsers["bob"]
    room.publish_view("bob", bob.viewport, ["b", "b2"])
    bob.fail = True
    ctx = await room.fetcher.fetch(asker="bob", source="browser")
    assert [c[0] for c in room.calls] == ["bob", "alice"]
    assert Box(**room.calls[1][1]["bounds"]) == bob.viewport
    assert ctx.source_identity == "alice" and ctx.asker == "bob"
    assert ctx.viewport == bob.viewport and ctx.selection == ["b", "b2"]
    assert ctx.view_note is None


async def test_explicit_bounds_go_to_whoever_renders_and_the_selection_stays_the_askers(
    room: Room,
) -> None:
    box = Box(x=10, y=20, w=300, h=200)
    room.publish_view("erin", Box(x=5000, y=0, w=1000, h=700), ["e"])
    ctx = await room.fetcher.fetch(bounds=box, asker="erin", source="browser")
    # erin's tab offers no context: the host renders the bounds the prompt named.
    assert [c[0] for c in room.calls] == ["alice"]
    assert Box(**room.calls[0][1]["bounds"]) == box
    assert ctx.asker == "erin" and ctx.selection == ["e"]
    assert ctx.viewport == Box(x=5000, y=0, w=1000, h=700)


async def test_an_http_prompt_sees_the_hosts_view_with_no_selection_and_says_so(
    room: Room,
) -> None:
    ctx = await room.fetcher.fetch(asker=None, source="http")
    assert [c[0] for c in room.calls] == ["alice"]
    assert ctx.source_identity == "alice" and ctx.asker is None
    assert ctx.viewport == room.browsers["alice"].viewport
    assert ctx.selection == []  # alice's selection is not the asker's
    assert ctx.view_note is not None and "HTTP" in ctx.view_note and "host" in ctx.view_note


async def test_a_voice_prompt_with_no_canvas_open_sees_the_hosts_view_and_says_so(
    room: Room,
) -> None:
    ctx = await room.fetcher.fetch(asker="dave", source="voice")
    assert [c[0] for c in room.calls] == ["alice"]
    assert ctx.asker is None and ctx.selection == []
    assert ctx.view_note is not None and "spoken" in ctx.view_note


async def test_the_stewards_own_runs_keep_the_answering_browsers_view(room: Room) -> None:
    ctx = await room.fetcher.fetch(asker=None, source="system")
    assert ctx.selection == ["a"] and ctx.view_note is None


async def test_every_browser_failing_degrades_but_keeps_the_askers_published_view(
    room: Room,
) -> None:
    for b in room.browsers.values():
        b.fail = True
    room.publish_view("carol", Box(x=1, y=2, w=3, h=4), ["c9"])
    ctx = await room.fetcher.fetch(asker="carol", source="browser")
    assert ctx.degraded and ctx.screenshot is None
    assert ctx.viewport == Box(x=1, y=2, w=3, h=4) and ctx.selection == ["c9"]


async def test_relay_edits_reach_only_their_authors_prompt_once(room: Room) -> None:
    seen = {"old"}
    room.edits.record("bob", ["new", "old"], [], lambda sid: sid in seen)
    room.edits.record("carol", ["x"], ["old"], lambda sid: sid in seen)
    ctx = await room.fetcher.fetch(asker="bob", source="browser")
    assert ctx.user_changes == [
        {"id": "new", "change": "created"},
        {"id": "old", "change": "updated"},
    ]
    again = await room.fetcher.fetch(asker="bob", source="browser")
    assert again.user_changes == []  # the agent has seen them
    carol = await room.fetcher.fetch(asker="carol", source="browser")
    assert carol.user_changes == [
        {"id": "x", "change": "created"},
        {"id": "old", "change": "deleted"},
    ]
    assert (await room.fetcher.fetch(asker=None, source="http")).user_changes == []


def test_user_edits_fold_repeated_changes_of_one_shape() -> None:
    edits = UserEdits(max_tracked=3)
    exists = {"kept"}.__contains__
    edits.record("u", ["fresh"], [], exists)
    edits.record("u", ["fresh"], [], exists)  # still new to the agent
    edits.record("u", ["temp"], [], exists)
    edits.record("u", [], ["temp"], exists)  # created and gone: nothing to tell
    edits.record("u", [], ["kept"], exists)
    assert edits.take("u") == [
        {"id": "fresh", "change": "created"},
        {"id": "kept", "change": "deleted"},
    ]
    for i in range(5):
        edits.record("u", [f"s{i}"], [], exists)
    assert [c["id"] for c in edits.take("u")] == ["s2", "s3", "s4"]  # the newest kept
    assert edits.take(None) == []


async def test_host_mode_asks_only_the_askers_browser_for_its_edits_once() -> None:
    room = Room(browser_changes=True)
    room.browsers["bob"].changes = [{"id": "b1", "change": "updated"}]
    assert room.fetcher.prefetch(asker="bob") == "started"
    for task in list(room.fetcher.cache.prefetches):
        await task
    assert "user_changes" in room.calls[0][1]["want"]
    first = await room.fetcher.fetch(asker="bob", source="browser")
    assert first.source == "prefetched"
    assert first.user_changes == [{"id": "b1", "change": "updated"}]
    second = await room.fetcher.fetch(asker="bob", source="browser")
    assert second.source == "prefetched" and second.user_changes == []
    room.browsers["bob"].fail = True
    room.publish_view("bob", Box(x=0, y=0, w=10, h=10), [])
    await room.fetcher.fetch(asker="bob", source="browser")
    assert "user_changes" not in room.calls[-1][1]["want"]  # alice's edits are not bob's


async def test_prefetches_are_per_asker_and_a_new_selection_voids_them(room: Room) -> None:
    assert room.fetcher.prefetch(asker="bob") == "started"
    assert room.fetcher.prefetch(asker="carol") == "started"
    for task in list(room.fetcher.cache.prefetches):
        await task
    assert room.fetcher.prefetch(asker="bob") == "cached"
    bob = await room.fetcher.fetch(asker="bob", source="browser")
    carol = await room.fetcher.fetch(asker="carol", source="browser")
    assert (bob.source_identity, carol.source_identity) == ("bob", "carol")
    assert len(room.calls) == 2
    room.publish_view("bob", room.browsers["bob"].viewport, ["b"])  # same view: kept
    assert room.fetcher.prefetch(asker="bob") == "cached"
    room.publish_view("bob", room.browsers["bob"].viewport, ["other"])
    assert room.fetcher.prefetch(asker="bob") == "started"
    assert room.fetcher.prefetch(asker="carol") == "cached"


def _says_ok() -> CannedModel:
    """A model that only says one message (and keeps what it was asked)."""
    return CannedModel(['{"_type": "message", "text": "ok"}]}'])


async def test_the_model_request_says_whose_view_it_is_and_what_the_asker_changed() -> None:
    model = _says_ok()
    agent = OneShotRunner(OneShotConfig(settings=Settings(), model=model))
    session = MemorySession(
        MemoryRoom(
            user_changes=[{"id": "box-1", "change": "updated"}],
            view_note="This request came over HTTP, with no browser behind it: the host's view.",
        )
    )
    prompt = PromptInput(message="make this blue", source="http", requester="http")
    assert await agent.run(session, prompt) == "done"
    text = "\n".join(str(b.get("text", "")) for b in model.requests[0].user)
    assert "Whose view this is: This request came over HTTP" in text
    assert 'Recent user edits:\n[{"id":"box-1","change":"updated"}]' in text
    plain = _says_ok()
    agent = OneShotRunner(OneShotConfig(settings=Settings(), model=plain))
    assert await agent.run(MemorySession(), prompt) == "done"
    text = "\n".join(str(b.get("text", "")) for b in plain.requests[0].user)
    assert "Whose view" not in text and "Recent user edits" not in text


async def test_a_failed_source_is_asked_last_and_one_sending_garbage_not_at_all(
    room: Room,
) -> None:
    room.browsers["alice"].fail = True  # the host answers with an error
    ctx = await room.fetcher.fetch(asker="erin", source="browser")
    assert [c[0] for c in room.calls] == ["alice", "bob"]
    assert ctx.source_identity == "bob"
    # The run's next look, and the room's next runs: the others first, her last.
    assert room.participants.avoided() == {"alice"} and room.participants.host == "bob"
    room.calls.clear()
    await room.fetcher.fetch(asker="erin", source="browser")
    assert [c[0] for c in room.calls] == ["bob"]
    # Bob answers with a reply no honest browser sends: demoted at once, never asked.
    room.browsers["bob"].garbage = True
    room.browsers["alice"].fail = False
    room.calls.clear()
    ctx = await room.fetcher.fetch(asker="erin", source="browser")
    assert [c[0] for c in room.calls] == ["bob", "carol"] and ctx.source_identity == "carol"
    assert "bob" in room.participants.demoted()
    room.calls.clear()
    await room.fetcher.fetch(asker="erin", source="browser")
    assert [c[0] for c in room.calls] == ["carol"]  # alice still avoided: asked after carol
    room.participants.close()
