"""`STEWARD_STT`: which LiveKit Agents STT turns a microphone into text.

- `local`: pocketsphinx with the command grammar (no key, no network), see `local_stt`;
- `openai`: the LiveKit OpenAI plugin's file transcription, cut into utterances by the
  Silero VAD through LiveKit's `StreamAdapter` (`OPENAI_BASE_URL` may point elsewhere);
- `off`: the steward transcribes nobody (another voice agent may still send transcripts).

The VAD and engine are made once per process and shared by every room: a stream per
microphone holds the per-speaker state. One thread builds them at a time: a worker's jobs
start in threads together, and several onnxruntime sessions (the Silero VAD) created at once
wedged a whole worker (docs/DEPLOY.md, "The wedged worker"); `steward worker` builds them
before it registers, so its jobs find them made.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from livekit.agents import stt, vad
from livekit.agents.types import NOT_GIVEN
from livekit.plugins import silero

from steward.config import Settings
from steward.obs.logging import get_logger
from steward.voice.local_stt import LocalSTT


class SttConfigError(ValueError):
    """STEWARD_STT names an engine this build cannot run."""


@dataclass(frozen=True)
class _Key:
    engine: str
    min_silence_s: float
    openai_model: str
    openai_base_url: str | None
    openai_api_key: str | None


log = get_logger(__name__)

_engines: dict[_Key, stt.STT[Any]] = {}
_building = threading.Lock()


def _key(settings: Settings) -> _Key:
    api_key = settings.openai_api_key
    return _Key(
        engine=settings.steward_stt,
        min_silence_s=settings.steward_vad_min_silence_s,
        openai_model=settings.steward_openai_stt_model,
        openai_base_url=settings.openai_base_url,
        openai_api_key=api_key.get_secret_value() if api_key is not None else None,
    )


def make_vad(min_silence_s: float) -> vad.VAD:
    return silero.VAD.load(min_silence_duration=min_silence_s)


def _build(key: _Key) -> stt.STT[Any]:
    detector = make_vad(key.min_silence_s)
    if key.engine == "local":
        return LocalSTT(vad=detector)
    if key.engine == "openai":
        from livekit.plugins import openai

        if not key.openai_api_key:
            raise SttConfigError("STEWARD_STT=openai needs OPENAI_API_KEY")
        engine = openai.STT(
            model=key.openai_model,
            use_realtime=False,
            api_key=key.openai_api_key,
            base_url=key.openai_base_url or NOT_GIVEN,
        )
        return stt.StreamAdapter(stt=engine, vad=detector)
    raise SttConfigError(f"STEWARD_STT={key.engine!r}: choose local, openai or off")


def speech_engine(settings: Settings) -> stt.STT[Any] | None:
    """The shared engine for these settings, or None when transcription is off."""
    if settings.steward_stt == "off":
        return None
    key = _key(settings)
    engine = _engines.get(key)
    if engine is not None:
        return engine
    with _building:
        engine = _engines.get(key)
        if engine is None:
            started = time.perf_counter()
            engine = _engines[key] = _build(key)
            took_ms = round((time.perf_counter() - started) * 1000, 1)
            log.info("speech_engine_built", engine=key.engine, took_ms=took_ms)
    return engine
