"""The process-wide speech engine: built once, even when jobs start together."""

from __future__ import annotations

import threading
from typing import Any

from structlog.testing import capture_logs

from steward.config import Settings
from steward.voice.engines import speech_engine


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
