"""`STEWARD_STT`: which LiveKit Agents STT turns a microphone into text.

- `local`: pocketsphinx with the command grammar (no key, no network), see `local_stt`;
- `openai`: the LiveKit OpenAI plugin's file transcription, cut into utterances by the
  Silero VAD through LiveKit's `StreamAdapter` (`OPENAI_BASE_URL` may point elsewhere);
- `off`: the steward transcribes nobody (another voice agent may still send transcripts).

The VAD and engine are made once per process and shared by every room: a stream per
microphone holds the per-speaker state. One thread builds the VAD at a time: a worker's jobs
start in threads together, and several onnxruntime sessions (the Silero VAD) created at once
wedged a whole worker (docs/DEPLOY.md, "The wedged worker"); `steward worker` builds it
before it registers, so its jobs find it made. The OpenAI engine is the exception to "once
per process": its HTTP client belongs to one event loop, so each loop (room) has its own.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from typing import Any, TypeVar

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

K = TypeVar("K")
V = TypeVar("V")

# Process-wide: the Silero VADs (an onnxruntime session each) and the local engines.
_vads: dict[float, vad.VAD] = {}
_engines: dict[_Key, stt.STT[Any]] = {}
# Per event loop: the OpenAI plugin's HTTP client keeps connections and events of the loop
# that used it first, and a worker runs one loop per room.
_loop_engines: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[_Key, stt.STT[Any]]]
_loop_engines = weakref.WeakKeyDictionary()
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


def _once(cache: MutableMapping[K, V], key: K, build: Callable[[], V]) -> V:
    """`cache[key]`, built by one thread at a time (looked up again under the lock)."""
    value = cache.get(key)
    if value is None:
        with _building:
            value = cache.get(key)
            if value is None:
                value = cache[key] = build()
    return value


def _new_vad(key: _Key) -> vad.VAD:
    started = time.perf_counter()
    detector = make_vad(key.min_silence_s)
    took_ms = round((time.perf_counter() - started) * 1000, 1)
    log.info("speech_engine_built", engine=key.engine, took_ms=took_ms)
    return detector


def _openai(key: _Key, detector: vad.VAD) -> stt.STT[Any]:
    from livekit.plugins import openai

    engine = openai.STT(
        model=key.openai_model,
        use_realtime=False,
        api_key=key.openai_api_key or NOT_GIVEN,  # checked by speech_engine
        base_url=key.openai_base_url or NOT_GIVEN,
    )
    return stt.StreamAdapter(stt=engine, vad=detector)


def speech_engine(settings: Settings) -> stt.STT[Any] | None:
    """The engine for these settings on the running loop, or None when transcription is
    off. Raises SttConfigError for `openai` without a key."""
    if settings.steward_stt == "off":
        return None
    key = _key(settings)
    if key.engine == "openai" and not key.openai_api_key:
        raise SttConfigError("STEWARD_STT=openai needs OPENAI_API_KEY")
    detector = _once(_vads, key.min_silence_s, lambda: _new_vad(key))
    if key.engine == "local":
        return _once(_engines, key, lambda: LocalSTT(vad=detector))
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # called outside any loop: an engine of its own, kept by nobody
        return _openai(key, detector)
    per_loop = _once(_loop_engines, loop, dict)  # only this loop's thread reads it after
    engine = per_loop.get(key)
    if engine is None:
        engine = per_loop[key] = _openai(key, detector)
    return engine
