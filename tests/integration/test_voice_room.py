"""The steward hears the room (real livekit-server, Postgres and speech).

A participant publishes a microphone track playing espeak-ng speech; the steward
transcribes it with the `local` engine, captions it to everyone as `lk.transcription`
streams, and runs the addressed request on every client's canvas.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from livekit import rtc

from steward.access import mint_token
from steward.room.runs.session import RoomSession
from steward.room.runtime import RoomRuntime
from steward.service import StewardService
from steward.store.database import Database
from steward.task_set import TaskSet, close_within
from steward.voice.captions import caption_attributes
from steward_tools.headless.client import HeadlessClient
from steward_tools.livekit_server import LiveKitServer
from steward_tools.rigs.responders import PlanResponder
from steward_tools.voice.microphone import WavMicrophone
from steward_tools.voice.speech import SpokenText, speak
from tests.conftest import wait_for
from tests.support.anthropic_fake import StartFake
from tests.support.openai_stt_fake import FakeOpenAITranscription
from tests.support.room import (
    close_all,
    join_clients,
    recording_steward,
    room_settings,
    settle,
)

pytestmark = pytest.mark.integration

TRACK_ID = "lk.transcribed_track_id"  # a caption's attribute: the speaker's microphone


@dataclass
class Caption:
    sender: str
    attributes: dict[str, str]
    text: str


class CaptionLog:
    """What one browser receives on `lk.transcription`."""

    def __init__(self, room: rtc.Room) -> None:
        self.captions: list[Caption] = []
        self._tasks = TaskSet("caption_read_failed")
        room.register_text_stream_handler("lk.transcription", self._on_stream)

    def _on_stream(self, reader: rtc.TextStreamReader, sender: str) -> None:
        self._tasks.spawn(self._read(reader, sender))

    async def _read(self, reader: rtc.TextStreamReader, sender: str) -> None:
        text = await reader.read_all()
        self.captions.append(Caption(sender, dict(reader.info.attributes or {}), text))

    def finals(self, track_sid: str) -> list[str]:
        return [
            c.text
            for c in self.captions
            if c.attributes.get("lk.transcription_final") == "true"
            and c.attributes.get(TRACK_ID) == track_sid
        ]


@pytest.fixture
async def voice_steward(
    livekit_server: LiveKitServer, database: Database
) -> AsyncIterator[StewardService]:
    service, _ = await recording_steward(
        livekit_server, database, steward_stt="local", steward_caption_agents="other-voice-agent"
    )
    yield service
    await service.close()


@pytest.fixture(scope="module")
def speech(tmp_path_factory: pytest.TempPathFactory) -> dict[str, SpokenText]:
    folder = Path(tmp_path_factory.mktemp("speech"))
    said = {
        "flow": "steward, draw a flow chart of our signup",
        "no_wake": "let us draw a flow chart of our signup",
        "project": "steward, project draw a house",
        "pick": "steward, bramble and clover, draw a garden",
        "undo": "steward, undo",
    }
    return {key: speak(text, folder / f"{key}.wav") for key, text in said.items()}


async def _speaker(client: HeadlessClient, runtime: RoomRuntime) -> tuple[WavMicrophone, str]:
    mic = WavMicrophone(client.room)
    sid = await mic.publish()
    await wait_for(
        lambda: runtime.voice is not None and client.identity in runtime.voice.listening_to
    )
    return mic, sid


async def _handled(runtime: RoomRuntime) -> None:
    """Every final the steward captioned so far has been through intake."""
    assert runtime.voice is not None
    async with asyncio.timeout(10):
        await runtime.voice.handled()


async def _spoken_run(runtime: RoomRuntime) -> tuple[str, RoomSession]:
    """The run a spoken request started (the fairies it directs open runs of their own)."""

    def spoken() -> list[tuple[str, RoomSession]]:
        return [(k, s) for k, s in runtime.sessions.sessions.items() if s.prompt.source == "voice"]

    await wait_for(lambda: len(spoken()) == 1, timeout=15)
    return spoken()[0]


async def test_a_spoken_request_is_captioned_and_drawn_for_everyone(
    voice_steward: StewardService,
    livekit_server: LiveKitServer,
    room_name: str,
    speech: dict[str, SpokenText],
) -> None:
    runtime = await voice_steward.join(room_name)
    clients = await join_clients(livekit_server, room_name, ["alice", "bob", "carol"], runtime)
    captions = CaptionLog(clients[1].room)
    mic, sid = await _speaker(clients[0], runtime)
    try:
        await mic.play(speech["no_wake"].path)
        await wait_for(lambda: len(captions.finals(sid)) == 1, timeout=15)
        await _handled(runtime)
        assert runtime.sessions.sessions == {}  # no wake phrase: nothing runs

        await mic.play(speech["flow"].path)
        await wait_for(lambda: len(runtime.sessions.sessions) == 1, timeout=15)
        (session_id, session) = next(iter(runtime.sessions.sessions.items()))
        assert session.prompt.source == "voice" and session.prompt.requester == "alice"
        assert "flow chart" in session.prompt.message
        assert not session.prompt.message.lower().startswith("steward")
        await runtime.sessions.wait(session_id, timeout=30)
        await settle(runtime, clients, session_id)
        assert clients[0].shapes and all(c.shapes == clients[0].shapes for c in clients)
        assert clients[0].shapes == runtime.mirror.shapes

        await wait_for(lambda: len(captions.finals(sid)) == 2, timeout=10)
        assert "flow chart" in captions.finals(sid)[1]
        mine = [c for c in captions.captions if c.attributes["lk.transcribed_track_id"] == sid]
        assert any(c.attributes["lk.transcription_final"] == "false" for c in mine)
        final_segments = {
            c.attributes["lk.segment_id"]
            for c in mine
            if c.attributes["lk.transcription_final"] == "true"
        }
        assert len(final_segments) == 2  # one segment per utterance
    finally:
        await mic.close()
        await close_all(clients)


async def test_a_spoken_project_needs_no_colon_and_the_fairies_work_it(
    voice_steward: StewardService,
    livekit_server: LiveKitServer,
    room_name: str,
    speech: dict[str, SpokenText],
) -> None:
    runtime = await voice_steward.join(room_name)
    clients = await join_clients(livekit_server, room_name, ["alice", "bob"], runtime)
    mic, _ = await _speaker(clients[0], runtime)
    try:
        await mic.play(speech["project"].path)
        session_id, session = await _spoken_run(runtime)
        assert session.prompt.message.lower().startswith("project")
        await runtime.sessions.wait(session_id, timeout=60)
        await settle(runtime, clients, session_id)
        assert voice_steward.fairies is not None
        room = voice_steward.fairies.rooms[room_name]
        (project,) = room.board.projects.values()  # the lead and every free drone
        assert project.status == "done" and project.orchestrator == "fairy-1"
        assert set(project.members) == {"fairy-2", "fairy-3"}
        assert clients[0].shapes and all(c.shapes == clients[0].shapes for c in clients)
    finally:
        await mic.close()
        await close_all(clients)


async def test_fairies_named_first_work_the_spoken_request_as_picked(
    voice_steward: StewardService,
    livekit_server: LiveKitServer,
    room_name: str,
    speech: dict[str, SpokenText],
) -> None:
    runtime = await voice_steward.join(room_name)
    clients = await join_clients(livekit_server, room_name, ["alice", "bob"], runtime)
    mic, _ = await _speaker(clients[0], runtime)
    try:
        await mic.play(speech["pick"].path)
        session_id, _ = await _spoken_run(runtime)
        await runtime.sessions.wait(session_id, timeout=60)
        await settle(runtime, clients, session_id)
        assert voice_steward.fairies is not None
        room = voice_steward.fairies.rooms[room_name]
        (project,) = room.board.projects.values()  # Bramble leads, Clover draws: a duo
        assert project.kind == "duo" and project.status == "done"
        assert project.orchestrator == "fairy-1" and project.members == ("fairy-2",)
        assert room.history_of("fairy-3") == []  # Fennel was not named
        assert clients[0].shapes and all(c.shapes == clients[0].shapes for c in clients)
    finally:
        await mic.close()
        await close_all(clients)


async def test_steward_undo_spoken_takes_back_the_speakers_run_without_the_model(
    livekit_server: LiveKitServer,
    database: Database,
    room_name: str,
    speech: dict[str, SpokenText],
) -> None:
    service, runners = await recording_steward(livekit_server, database, steward_stt="local")
    clients: list[HeadlessClient] = []
    try:
        runtime = await service.join(room_name)
        clients = await join_clients(livekit_server, room_name, ["alice", "bob"], runtime)
        mic, _ = await _speaker(clients[0], runtime)
        try:
            await mic.play(speech["flow"].path)
            await wait_for(lambda: len(runtime.sessions.sessions) == 1, timeout=15)
            run, session = next(iter(runtime.sessions.sessions.items()))
            asked = session.prompt.message  # as heard: a loaded machine may drop a word
            await runtime.sessions.wait(run, timeout=30)
            await settle(runtime, clients, run)
            assert clients[0].shapes and len(runners) == 1

            await mic.play(speech["undo"].path)  # "steward, undo": a command, not a prompt
            await wait_for(lambda: len(runtime.sessions.kinds) == 2, timeout=15)
            undo = next(s for s in runtime.sessions.kinds if s != run)
            assert runtime.sessions.kinds[undo] == "revert"
            assert runtime.sessions.owner(undo) == "alice"
            assert await clients[1].wait_status(undo) == "done"
            await settle(runtime, clients, undo)
            assert runtime.mirror.shapes == {}
            assert all(c.shapes == {} for c in clients)
            assert len(runners) == 1  # no model run for the word
            said = [m.text for m in clients[1].chat if m.session_id == undo]
            assert "flow chart" in asked
            assert said and said[0].startswith(f'Took back "{asked[:20]}')
        finally:
            await mic.close()
    finally:
        await close_all(clients)
        await service.close()


async def test_a_participant_without_the_grant_is_captioned_but_never_prompts(
    voice_steward: StewardService,
    livekit_server: LiveKitServer,
    room_name: str,
    speech: dict[str, SpokenText],
) -> None:
    runtime = await voice_steward.join(room_name)
    (alice,) = await join_clients(livekit_server, room_name, ["alice"], runtime)
    (eve,) = await join_clients(livekit_server, room_name, ["eve"], runtime, can_prompt=False)
    captions = CaptionLog(alice.room)
    mic, sid = await _speaker(eve, runtime)
    try:
        await mic.play(speech["flow"].path)
        await wait_for(lambda: len(captions.finals(sid)) == 1, timeout=15)
        assert "flow chart" in captions.finals(sid)[0]
        await _handled(runtime)
        assert runtime.sessions.sessions == {}
    finally:
        await mic.close()
        await close_all([alice, eve])


async def test_releasing_push_to_talk_mid_silence_ends_the_utterance(
    voice_steward: StewardService,
    livekit_server: LiveKitServer,
    room_name: str,
    speech: dict[str, SpokenText],
) -> None:
    """The microphone stops right after the last word and is muted (push-to-talk let go):
    a muted track still delivers silence to the steward, so the utterance ends and prompts."""
    runtime = await voice_steward.join(room_name)
    (alice,) = await join_clients(livekit_server, room_name, ["alice"], runtime)
    mic, _ = await _speaker(alice, runtime)
    try:
        said = speech["flow"]
        await mic.play(said.path, until_s=said.speech_end_s + 0.05)
        mic.track.mute()
        await wait_for(lambda: len(runtime.sessions.sessions) == 1, timeout=10)
        session = next(iter(runtime.sessions.sessions.values()))
        assert "flow chart" in session.prompt.message
    finally:
        await mic.close()
        await close_all([alice])


async def test_a_speaker_another_agent_transcribes_is_not_transcribed_twice(
    voice_steward: StewardService,
    livekit_server: LiveKitServer,
    room_name: str,
    speech: dict[str, SpokenText],
) -> None:
    runtime = await voice_steward.join(room_name)
    alice, bob = await join_clients(livekit_server, room_name, ["alice", "bob"], runtime)
    captions = CaptionLog(bob.room)
    mic, sid = await _speaker(alice, runtime)
    marker, marker_sid = await _speaker(bob, runtime)
    other = rtc.Room()
    token = mint_token(
        livekit_server.api_key,
        livekit_server.api_secret,
        room=room_name,
        identity="other-voice-agent",
        kind="agent",
        role="voice",
        can_prompt=False,
    )
    await other.connect(livekit_server.url, token)
    try:
        # A caption speaks for alice only once the steward knows its sender is a trusted agent.
        await wait_for(lambda: runtime.participants.get("other-voice-agent") is not None)

        async def transcript(text: str, *, final: bool) -> None:
            attributes = caption_attributes("SG_other", sid, final=final)
            await other.local_participant.send_text(
                text, topic="lk.transcription", attributes=attributes
            )

        # The other agent captions alice's track: the steward stops hearing her itself.
        await transcript("steward draw", final=False)
        voice = runtime.voice
        assert voice is not None
        await wait_for(lambda: "alice" not in voice.listening_to)
        await mic.play(speech["flow"].path)
        await transcript("Steward, draw a flow chart of our sign-up.", final=True)
        await wait_for(lambda: len(runtime.sessions.sessions) == 1, timeout=10)
        session = next(iter(runtime.sessions.sessions.values()))
        assert session.prompt.requester == "alice"  # the track's owner, not the agent
        assert session.prompt.message == "draw a flow chart of our sign-up"
        # Bob speaks after alice has finished: once the steward has captioned him, anything
        # it heard of alice itself would have been captioned (and prompted) before.
        await marker.play(speech["no_wake"].path)
        await wait_for(lambda: len(captions.finals(marker_sid)) == 1, timeout=15)
        await _handled(runtime)
        assert len(runtime.sessions.sessions) == 1
        of_alice = [c.sender for c in captions.captions if c.attributes.get(TRACK_ID) == sid]
        assert set(of_alice) == {"other-voice-agent"}
    finally:
        await other.disconnect()
        await marker.close()
        await mic.close()
        await close_all([alice, bob])


async def test_captions_only_or_nobody_as_configured(
    livekit_server: LiveKitServer, database: Database, room_name: str
) -> None:
    service, _ = await recording_steward(
        livekit_server, database, steward_stt="local", steward_stt_unprivileged="ignore"
    )
    try:
        runtime = await service.join(room_name)
        (eve,) = await join_clients(livekit_server, room_name, ["eve"], runtime, can_prompt=False)
        mic = WavMicrophone(eve.room)
        sid = await mic.publish()

        def received() -> bool:  # the steward has eve's microphone: it chose whether to hear
            member = runtime.room.remote_participants.get("eve")
            publication = member.track_publications.get(sid) if member else None
            return publication is not None and publication.track is not None

        await wait_for(received)
        assert runtime.voice is not None and runtime.voice.listening_to == set()
        await mic.close()
        await close_all([eve])
    finally:
        await service.close()


async def test_the_openai_engine_through_its_livekit_plugin(
    livekit_server: LiveKitServer,
    database: Database,
    room_name: str,
    speech: dict[str, SpokenText],
) -> None:
    fake = FakeOpenAITranscription()
    base_url = await fake.start()
    service, _ = await recording_steward(
        livekit_server,
        database,
        steward_stt="openai",
        openai_base_url=base_url,
        openai_api_key=fake.api_key,
    )
    try:
        runtime = await service.join(room_name)
        clients = await join_clients(livekit_server, room_name, ["alice", "bob"], runtime)
        captions = CaptionLog(clients[1].room)
        mic, sid = await _speaker(clients[0], runtime)
        await mic.play(speech["flow"].path)
        await wait_for(lambda: len(runtime.sessions.sessions) == 1, timeout=20)
        session = next(iter(runtime.sessions.sessions.values()))
        assert "flow chart" in session.prompt.message and session.prompt.requester == "alice"
        await wait_for(lambda: len(captions.finals(sid)) == 1, timeout=10)
        assert fake.requests and fake.requests[0]["model"] == "gpt-4o-mini-transcribe"
        await mic.close()
        await close_all(clients)
    finally:
        await service.close()
        await fake.stop()


async def test_a_spoken_request_through_the_anthropic_provider(
    livekit_server: LiveKitServer,
    database: Database,
    room_name: str,
    speech: dict[str, SpokenText],
    start_fake_anthropic: StartFake,
) -> None:
    """The model (a local Messages server answering only from its request) is asked for
    what was said, after the wake phrase; three clients end with its drawing, identical."""
    responder = PlanResponder(chunk=9)
    fake = await start_fake_anthropic(responder=responder)
    settings = room_settings(
        livekit_server,
        database.url,
        steward_model="anthropic:claude-voice-test",
        anthropic_base_url=fake.base_url,
        steward_stt="local",
    )
    service = StewardService(settings, database=database)
    await service.start(http=False)
    clients: list[HeadlessClient] = []
    mic: WavMicrophone | None = None
    try:
        runtime = await service.join(room_name)
        clients = await join_clients(livekit_server, room_name, ["alice", "bob", "carol"], runtime)
        mic, _ = await _speaker(clients[0], runtime)
        await mic.play(speech["flow"].path)
        await wait_for(lambda: len(runtime.sessions.sessions) == 1, timeout=15)
        session_id = next(iter(runtime.sessions.sessions))
        result = await runtime.sessions.wait(session_id, timeout=60)
        await settle(runtime, clients, session_id)
        assert responder.answered, result
        asked = responder.answered[0].view.user.lower()
        # The wake word is not part of the request (the channel line before it names the panel).
        said = asked.split("user request:", 1)[1]
        assert "flow chart of our sign" in said and "steward" not in said.split("flow")[0]
        assert clients[0].shapes and all(c.shapes == clients[0].shapes for c in clients)
        assert clients[0].shapes == runtime.mirror.shapes
    finally:
        if mic is not None:
            await close_within(mic.close(), "test_microphone")
        await close_all(clients)
        await service.close()
