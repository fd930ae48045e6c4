"""Voice without a room: the wake phrase, voice intake, captions, and the local engine on
real speech (espeak-ng through sox, decoded by pocketsphinx behind the Silero VAD)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from livekit import rtc

from steward.access import Grant
from steward.ports import PromptInput
from steward.room.inbound.intake import Intake, addressed_text
from steward.room.participants import Participants
from steward.voice.captions import caption_attributes
from steward.voice.engines import make_vad
from steward.voice.local_stt import SAMPLE_RATE, LocalSTT
from steward_tools.voice.speech import read_pcm, speak


def test_wake_phrase_variants() -> None:
    assert addressed_text("Stewart, draw a box", "steward") == "draw a box"
    assert addressed_text("hey stewart draw a box", "steward") == "draw a box"
    assert addressed_text("okay steward: stop", "steward") == "stop"
    assert addressed_text("steward", "steward") == ""
    assert addressed_text("the stewardess draws", "steward") is None
    assert addressed_text("draw a box", "steward") is None


class _Clock:
    now = 100.0

    def __call__(self) -> float:
        return self.now


def _intake(clock: _Clock, running: list[str]) -> tuple[Intake, list[PromptInput], list[str]]:
    participants = Participants()
    participants.joined("alice", 1, {"steward.can_prompt": "signed"})
    participants.joined("bob", 2, {})
    prompts: list[PromptInput] = []
    cancelled: list[str] = []

    async def start(prompt: PromptInput) -> str:
        prompts.append(prompt)
        return f"s-{len(prompts)}"

    def cancel(session_id: str, _by: str) -> bool:
        cancelled.append(session_id)
        return True

    intake = Intake(
        "room",
        participants,
        start,
        cancel,
        verify_grant=lambda m: (
            Grant("p", 2**40, "nonce-alice")
            if (m.identity, m.prompt_grant) == ("alice", "signed")
            else None
        ),
        running=lambda: list(running),
        clock=clock,
    )
    return intake, prompts, cancelled


async def test_voice_final_prompts_stops_and_runs_each_utterance_once() -> None:
    clock = _Clock()
    intake, prompts, cancelled = _intake(clock, running=["s-a", "s-b"])
    assert await intake.voice_final("alice", "steward draw a flow chart of our sign up") == "s-1"
    assert prompts[0].message == "draw a flow chart of our sign up"
    assert (prompts[0].source, prompts[0].requester) == ("voice", "alice")
    # The same words again at once (another agent transcribed them too): one prompt.
    assert await intake.voice_final("alice", "Steward, draw a flow chart of our sign up.") is None
    assert len(prompts) == 1
    # No wake phrase: nothing runs.
    clock.now += 10
    assert await intake.voice_final("alice", "draw a box") is None
    # "steward" alone arms the speaker for the next segment, within the window only.
    assert await intake.voice_final("alice", "steward") is None
    clock.now += 2
    assert await intake.voice_final("alice", "add a circle") == "s-2"
    assert await intake.voice_final("alice", "add a star") is None
    # "steward, stop" cancels the running sessions instead of prompting.
    assert await intake.voice_final("alice", "hey steward stop that") is None
    assert cancelled == ["s-a", "s-b"] and len(prompts) == 2
    # Someone without the grant never prompts nor cancels.
    assert await intake.voice_final("bob", "steward draw a box") is None
    assert await intake.voice_final("bob", "steward stop") is None
    assert len(prompts) == 2 and cancelled == ["s-a", "s-b"]


def test_caption_attributes_are_livekits() -> None:
    assert caption_attributes("SG_1", "TR_a", final=True) == {
        "lk.segment_id": "SG_1",
        "lk.transcribed_track_id": "TR_a",
        "lk.transcription_final": "true",
    }


async def _transcribe(engine: LocalSTT, path: Path) -> tuple[list[str], list[str]]:
    pcm = read_pcm(path) + b"\0" * SAMPLE_RATE  # a second of silence closes the utterance
    stream = engine.stream()
    step = SAMPLE_RATE // 50 * 2

    async def feed() -> None:
        for i in range(0, len(pcm), step):
            chunk = pcm[i : i + step].ljust(step, b"\0")
            stream.push_frame(rtc.AudioFrame(chunk, SAMPLE_RATE, 1, step // 2))
            await asyncio.sleep(0.005)
        stream.end_input()

    feeding = asyncio.ensure_future(feed())
    interims: list[str] = []
    finals: list[str] = []
    async for ev in stream:
        text = ev.alternatives[0].text if ev.alternatives else ""
        if ev.type.name == "INTERIM_TRANSCRIPT":
            interims.append(text)
        elif ev.type.name == "FINAL_TRANSCRIPT":
            finals.append(text)
    await feeding
    return interims, finals


async def test_local_engine_transcribes_real_speech(tmp_path: Path) -> None:
    engine = LocalSTT(vad=make_vad(0.4))
    said = speak("steward, draw a flow chart of our signup", tmp_path / "flow.wav")
    assert 0 < said.speech_end_s < said.duration_s
    interims, finals = await _transcribe(engine, said.path)
    assert len(finals) == 1, finals
    assert addressed_text(finals[0], "steward") is not None
    assert "flow chart" in finals[0]
    assert interims  # captions move while the speaker talks
    _, none = await _transcribe(engine, speak("hello there", tmp_path / "x.wav").path)
    assert all(addressed_text(t, "steward") is None for t in none), none


@pytest.mark.parametrize("text", ["hey steward, stop", "stewart, add a circle"])
async def test_local_engine_hears_the_wake_variants(tmp_path: Path, text: str) -> None:
    _, finals = await _transcribe(LocalSTT(vad=make_vad(0.4)), speak(text, tmp_path / "a.wav").path)
    assert len(finals) == 1 and addressed_text(finals[0], "steward"), finals


class _Writer:
    async def write(self, text: str) -> None: ...

    async def aclose(self) -> None: ...


class _Participant:
    def __init__(self) -> None:
        self.streams: list[dict[str, object]] = []

    async def stream_text(self, **kw: object) -> _Writer:
        self.streams.append(kw)
        return _Writer()


class _Room:
    def __init__(self) -> None:
        self.local_participant = _Participant()


async def test_a_steward_without_the_rooms_lease_publishes_no_caption() -> None:
    from steward.voice.listener import RoomVoice

    held = [True]

    async def may_speak(_topic: str) -> bool:
        return held[0]

    async def on_final(*_: object) -> None: ...

    room = _Room()
    voice = RoomVoice(
        room,  # type: ignore[arg-type]
        "r",
        None,  # type: ignore[arg-type]
        hearing=lambda _: "prompt",
        on_final=on_final,
        may_speak=may_speak,
    )
    await voice.caption("alice", "TR_1", "seg-1", "draw a", final=False)
    held[0] = False  # another steward took the room
    await voice.caption("alice", "TR_1", "seg-1", "draw a box", final=True)
    assert [s["sender_identity"] for s in room.local_participant.streams] == ["alice"]
