"""The process-wide speech engine: built once, even when jobs start together."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from livekit import rtc
from structlog.testing import capture_logs

from steward.config import Settings
from steward.voice.engines import speech_engine
from tests.support.openai_stt_fake import FakeOpenAITranscription


def test_jobs_starting_together_build_one_engine() -> None:
    # A worker's jobs start in threads at once; each built its own Silero VAD (an
    # onnxruntime session), and sessions created together wedged a worker.
    settings = Settings(steward_stt="local", steward_vad_min_silence_s=1.234)  # a fresh key
    threads = 6
    start = threading.Barrier(threads)
    got: list[Any] = []

    def job() -> None:
        start.wait()
        got.append(speech_engine(settings))

    with capture_logs() as logs:
        workers = [threading.Thread(target=job) for _ in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join(30)
    assert len(got) == threads
    assert len({id(engine) for engine in got}) == 1
    built = [e for e in logs if e["event"] == "speech_engine_built"]
    assert len(built) == 1 and built[0]["engine"] == "local"
    assert speech_engine(settings) is got[0]


def test_no_engine_when_transcription_is_off() -> None:
    assert speech_engine(Settings(steward_stt="off")) is None


def test_the_openai_engine_is_one_per_event_loop_over_one_vad() -> None:
    settings = Settings(
        steward_stt="openai",
        openai_api_key="k",
        openai_base_url="http://127.0.0.1:9/v1",
        steward_vad_min_silence_s=1.345,  # a fresh key: this test builds the VAD itself
    )

    async def engine_twice() -> tuple[Any, Any]:
        return speech_engine(settings), speech_engine(settings)

    with capture_logs() as logs:
        first, again = asyncio.run(engine_twice())
        other, _ = asyncio.run(engine_twice())
    assert first is again  # one per loop...
    assert other is not first  # ...and each loop its own
    assert [e["event"] for e in logs].count("speech_engine_built") == 1  # one VAD


async def test_openai_transcription_from_several_loops_needs_no_retry() -> None:
    # A worker's rooms each run their own loop. One shared OpenAI client failed every
    # request after the first loop with "Event loop is closed" (or "bound to a different
    # event loop") and only the plugin's retry hid it: 5 requests for 3 transcriptions.
    fake = FakeOpenAITranscription()
    base_url = await fake.start()
    try:
        settings = Settings(
            steward_stt="openai", openai_base_url=base_url, openai_api_key=fake.api_key
        )
        frame = rtc.AudioFrame(b"\0\0" * 16000, 16000, 1, 16000)

        def room_loop() -> str:
            async def transcribe() -> str:
                engine = speech_engine(settings)
                assert engine is not None
                event = await engine.recognize([frame])
                return event.alternatives[0].text if event.alternatives else ""

            return asyncio.run(transcribe())

        for _ in range(3):
            assert await asyncio.to_thread(room_loop) == ""  # silence
        assert len(fake.requests) == 3
    finally:
        await fake.stop()
