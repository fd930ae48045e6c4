"""The `local` speech engine: pocketsphinx 5 behind LiveKit Agents' STT interface.

It needs no key and no network: the wheel ships an English acoustic model and dictionary.
Free dictation with the generic language model is poor on our sentences, so by default
it decodes against `commands.jsgf` (an optional wake phrase, then a canvas request). The
stream finds utterances with the VAD it is given and decodes while the speaker talks, so a
final segment follows the end of speech by the VAD's silence window plus a few ms.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from livekit import rtc
from livekit.agents import stt, utils
from livekit.agents import vad as agents_vad
from livekit.agents.language import LanguageCode
from livekit.agents.types import (
    DEFAULT_API_CONNECT_OPTIONS,
    NOT_GIVEN,
    APIConnectOptions,
    NotGivenOr,
)
from pocketsphinx import Decoder  # type: ignore[import-untyped]

GRAMMAR = Path(__file__).with_name("commands.jsgf")
SAMPLE_RATE = 16000
# Interim captions at most this often: each one is a text stream to every browser.
INTERIM_EVERY_S = 0.25
_LANGUAGE = LanguageCode("en")
# The final is decoded ahead once the speaker has been silent this long, with this much
# silence added (the decoder ends an utterance better after a pause).
GUESS_AFTER_S = 0.1
_GUESS_TAIL = b"\0" * int(0.3 * SAMPLE_RATE) * 2


def make_decoder(grammar: Path | None) -> Decoder:
    """A decoder on the wheel's en-us model; `grammar` None means free dictation."""
    if grammar is None:
        return Decoder(samprate=SAMPLE_RATE, loglevel="FATAL")
    return Decoder(samprate=SAMPLE_RATE, jsgf=str(grammar), loglevel="FATAL")


def _hypothesis(decoder: Decoder) -> str:
    hyp = decoder.hyp()
    return str(hyp.hypstr).strip() if hyp is not None else ""


def decode_pcm(decoder: Decoder, pcm: bytes) -> str:
    """The text of one whole utterance (16 kHz mono s16le)."""
    decoder.start_utt()
    decoder.process_raw(pcm, False, True)
    decoder.end_utt()
    return _hypothesis(decoder)


def _mono_16k(frame: rtc.AudioFrame) -> bytes:
    if frame.num_channels != 1:
        raise ValueError(f"the local engine takes mono audio, not {frame.num_channels} channels")
    if frame.sample_rate != SAMPLE_RATE:
        resampler = rtc.AudioResampler(frame.sample_rate, SAMPLE_RATE)
        frame = utils.combine_frames([*resampler.push(frame), *resampler.flush()])
    return bytes(frame.data)


def _final(text: str, end_time: float) -> stt.SpeechEvent:
    return stt.SpeechEvent(
        type=stt.SpeechEventType.FINAL_TRANSCRIPT,
        alternatives=[stt.SpeechData(language=_LANGUAGE, text=text, confidence=1.0)],
        speech_end_time=end_time,
    )


class LocalSTT(stt.STT[Any]):
    """The `local` speech engine: pocketsphinx as a LiveKit Agents STT (no key, no network)."""

    def __init__(self, *, vad: agents_vad.VAD, grammar: Path | None = GRAMMAR) -> None:
        super().__init__(capabilities=stt.STTCapabilities(streaming=True, interim_results=True))
        self._vad = vad
        self._grammar = grammar

    @property
    def model(self) -> str:
        return "pocketsphinx-en-us" + ("+grammar" if self._grammar is not None else "")

    @property
    def provider(self) -> str:
        return "pocketsphinx"

    async def _recognize_impl(
        self,
        buffer: utils.AudioBuffer,
        *,
        language: NotGivenOr[str] = NOT_GIVEN,
        conn_options: APIConnectOptions,
    ) -> stt.SpeechEvent:
        pcm = _mono_16k(utils.merge_frames(buffer))
        loop = asyncio.get_running_loop()
        text = await loop.run_in_executor(
            None, lambda: decode_pcm(make_decoder(self._grammar), pcm)
        )
        return _final(text, time.time())

    def stream(
        self,
        *,
        language: NotGivenOr[str] = NOT_GIVEN,
        conn_options: APIConnectOptions = DEFAULT_API_CONNECT_OPTIONS,
    ) -> stt.RecognizeStream:
        return _LocalStream(self, self._vad, self._grammar, conn_options)


@dataclass
class _Utterance:
    decoder: Decoder
    pcm: list[bytes] = field(default_factory=list)
    last_interim: str = ""
    last_interim_at: float = 0.0
    # The final decoded ahead, from the speech up to the first silence (see `_run`).
    guess: asyncio.Future[str] | None = None


class _LocalStream(stt.RecognizeStream):
    def __init__(
        self,
        engine: LocalSTT,
        vad: agents_vad.VAD,
        grammar: Path | None,
        conn_options: APIConnectOptions,
    ) -> None:
        super().__init__(stt=engine, conn_options=conn_options, sample_rate=SAMPLE_RATE)
        self._vad = vad
        self._grammar = grammar
        self._next_decoder: asyncio.Future[Decoder] | None = None

    async def _fresh_decoder(self) -> Decoder:
        """A decoder that has heard nothing yet, and the next one made in the background:
        one that has heard earlier utterances adapted its cepstral mean to them and decodes
        the next one worse. Loading the model takes ~0.1 s, off the event loop."""
        loop = asyncio.get_running_loop()
        ready = self._next_decoder or loop.run_in_executor(None, make_decoder, self._grammar)
        self._next_decoder = loop.run_in_executor(None, make_decoder, self._grammar)
        return await ready

    def _decode(self, decoder: Decoder, pcm: bytes) -> asyncio.Future[str]:
        return asyncio.get_running_loop().run_in_executor(None, decode_pcm, decoder, pcm)

    async def _run(self) -> None:
        interim_decoder = await self._fresh_decoder()
        vad_stream = self._vad.stream()

        async def forward() -> None:
            async for item in self._input_ch:
                if isinstance(item, rtc.AudioFrame):
                    vad_stream.push_frame(item)
                else:
                    vad_stream.flush()
            vad_stream.end_input()

        forwarding = asyncio.create_task(forward(), name="local-stt-forward")
        try:
            utterance: _Utterance | None = None
            async for ev in vad_stream:
                if ev.type == agents_vad.VADEventType.START_OF_SPEECH:
                    utterance = _Utterance(interim_decoder)
                    interim_decoder.start_utt()
                    self._feed(utterance, ev.frames)
                    self._event_ch.send_nowait(
                        stt.SpeechEvent(type=stt.SpeechEventType.START_OF_SPEECH)
                    )
                elif ev.type == agents_vad.VADEventType.INFERENCE_DONE and utterance is not None:
                    self._feed(utterance, ev.frames)
                    self._interim(utterance)
                    # The final is decoded while the VAD waits out its silence window (the
                    # decode costs 50-400 ms): from the first silence, with the window's
                    # silence appended; speech that resumes throws that guess away.
                    if ev.raw_accumulated_silence == 0.0:
                        utterance.guess = None
                    elif utterance.guess is None and ev.raw_accumulated_silence >= GUESS_AFTER_S:
                        pcm = b"".join(utterance.pcm) + _GUESS_TAIL
                        utterance.guess = self._decode(await self._fresh_decoder(), pcm)
                elif ev.type == agents_vad.VADEventType.END_OF_SPEECH and utterance is not None:
                    end_time = time.time() - ev.silence_duration
                    interim_decoder.end_utt()
                    guess, utterance = utterance.guess, None
                    if guess is None:
                        pcm = b"".join(_mono_16k(f) for f in ev.frames)
                        guess = self._decode(await self._fresh_decoder(), pcm)
                    text = await guess
                    if text:
                        self._event_ch.send_nowait(_final(text, end_time))
                    self._event_ch.send_nowait(
                        stt.SpeechEvent(
                            type=stt.SpeechEventType.END_OF_SPEECH, speech_end_time=end_time
                        )
                    )
        finally:
            await utils.aio.cancel_and_wait(forwarding)
            await vad_stream.aclose()

    @staticmethod
    def _feed(utterance: _Utterance, frames: list[rtc.AudioFrame]) -> None:
        for frame in frames:
            pcm = _mono_16k(frame)
            utterance.pcm.append(pcm)
            utterance.decoder.process_raw(pcm, False, False)

    def _interim(self, utterance: _Utterance) -> None:
        now = time.monotonic()
        if now - utterance.last_interim_at < INTERIM_EVERY_S:
            return
        text = _hypothesis(utterance.decoder)
        if not text or text == utterance.last_interim:
            return
        utterance.last_interim, utterance.last_interim_at = text, now
        self._event_ch.send_nowait(
            stt.SpeechEvent(
                type=stt.SpeechEventType.INTERIM_TRANSCRIPT,
                alternatives=[stt.SpeechData(language=_LANGUAGE, text=text, confidence=0.5)],
            )
        )
