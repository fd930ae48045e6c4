"""`steward bench voice --json`: spoken prompts through a real room, timed and scored.

A participant publishes a microphone playing espeak-ng speech in real time: prompts that
address the steward and sentences that do not. For each, the steward's STT (the
configured engine, `local` by default) makes the final segment, intake decides. Figures:
- word accuracy of the final segments against what was said (1 - word error rate), and of
  pocketsphinx's free dictation (generic language model, no grammar) on the same audio;
- wake_detected (addressed utterances that became prompts), false_wakes (others that did);
- end of speech (the last voiced sample leaving the microphone) → prompt started, and →
  the session's first envelope handed to LiveKit, p50/p95 in ms (CLOCK_MONOTONIC).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from steward.commands.setup import print_json
from steward.obs.logging import configure_logging
from steward.obs.stage_hooks import Stage, StageEvent
from steward.room.outbound.envelopes import envelopes_in
from steward.voice.local_stt import decode_pcm, make_decoder
from steward_tools.bench.harness import Stack, percentiles, start_stack
from steward_tools.headless.client import HeadlessClient
from steward_tools.voice.microphone import WavMicrophone
from steward_tools.voice.speech import read_pcm, speak
from steward_tools.waiting import bounded, wait_until

ADDRESSED = (
    "steward, draw a flow chart of our sign up",
    "hey steward, draw a box",
    "stewart, add a circle",
    "okay steward, draw three boxes in a row",
    "steward, make a timeline of the project",
    "hey steward, add a sticky note",
    "steward, draw a mind map of the plan",
    "steward, draw a diagram of the login",
)
NOT_ADDRESSED = (
    "let us draw a flow chart of our sign up",
    "draw a box",
    "the meeting starts at noon",
)
TARGETS = {"end_of_speech_to_prompt_ms": 700.0}


def _words(text: str) -> list[str]:
    return "".join(c if c.isalnum() or c == " " else " " for c in text.lower()).split()


def word_errors(said: str, heard: str) -> int:
    """Word-level Levenshtein distance (substitutions, insertions, deletions)."""
    ref, hyp = _words(said), _words(heard)
    row = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        prev, row[0] = row[0], i
        for j, h in enumerate(hyp, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (r != h))
    return row[-1]


def accuracy(pairs: list[tuple[str, str]]) -> float:
    total = sum(len(_words(said)) for said, _ in pairs)
    errors = sum(word_errors(said, heard) for said, heard in pairs)
    return round(max(0.0, 1 - errors / total), 3) if total else 0.0


async def run(repeats: int = 1, engine: str = "local") -> dict[str, Any]:
    load_before = os.getloadavg()[0]
    stack = await start_stack(tokens_per_s=4000, steward_stt=engine)
    tmp = tempfile.TemporaryDirectory(prefix="steward-bench-voice-")
    try:
        return await _measure(stack, Path(tmp.name), repeats, load_before)
    finally:
        await stack.close()
        tmp.cleanup()


async def _measure(stack: Stack, folder: Path, repeats: int, load_before: float) -> dict[str, Any]:
    runtime = await stack.join("bench-voice")
    finals: list[str] = []
    final_at: list[float] = []  # when each final segment reached intake
    prompts: dict[str, float] = {}  # session → when it started
    intake = runtime.intake
    voice_final = intake.voice_final

    async def heard(speaker: str, text: str) -> str | None:
        finals.append(text)
        final_at.append(time.monotonic())
        session_id: str | None = await voice_final(speaker, text)
        return session_id

    def started(event: StageEvent) -> None:
        if isinstance(event.result, str) and event.started is not None:
            prompts[event.result] = event.started

    intake.voice_final = heard  # type: ignore[method-assign]
    intake.hooks.listen(Stage.PROMPT_STARTED, started)
    server = stack.server
    client = HeadlessClient.create(
        server.url, server.api_key, server.api_secret, room="bench-voice", identity="speaker"
    )
    await client.connect()
    mic = WavMicrophone(client.room)
    await mic.publish()
    voice = runtime.voice
    assert voice is not None
    await wait_until(lambda: "speaker" in voice.listening_to, 10, "the steward listening")

    said = [(text, True) for text in ADDRESSED] + [(text, False) for text in NOT_ADDRESSED]
    spoken = [speak(text, folder / f"u{i}.wav") for i, (text, _) in enumerate(said)]
    free = make_decoder(None)
    free_pairs = [(s.text, decode_pcm(free, read_pcm(s.path))) for s in spoken]
    pairs: list[tuple[str, str]] = []
    to_prompt: list[float] = []
    to_final: list[float] = []
    to_envelope: list[float] = []
    detected = false_wakes = 0
    try:
        for _ in range(repeats):
            for (text, addressed), audio in zip(said, spoken, strict=True):
                before_finals, before = len(finals), set(prompts)
                ended = await mic.play(audio.path, speech_end_s=audio.speech_end_s)
                assert ended is not None
                with contextlib.suppress(TimeoutError):  # out of grammar: maybe no segment
                    await wait_until(_more(finals, before_finals), 5, "a segment")
                await asyncio.sleep(0.3)  # a late second segment would show here
                pairs.append((text, " ".join(finals[before_finals:])))
                new = [sid for sid in prompts if sid not in before]
                if not new:
                    continue
                if not addressed:
                    false_wakes += 1
                    continue
                detected += 1
                to_final.append((final_at[before_finals] - ended) * 1000)
                session_id = new[0]
                to_prompt.append((prompts[session_id] - ended) * 1000)
                await runtime.sessions.wait(session_id, timeout=30)
                first = _first_envelope(stack.marks.publishes, session_id)
                if first is not None:
                    to_envelope.append((first - ended) * 1000)
    finally:
        await mic.close()
        await client.disconnect()
    addressed_n = sum(1 for _, a in said if a) * repeats
    out: dict[str, Any] = {
        "engine": stack.settings.steward_stt,
        "utterances": addressed_n,
        "not_addressed": len(said) * repeats - addressed_n,
        "words": sum(len(_words(t)) for t, _ in pairs),
        "word_accuracy": accuracy(pairs),
        "free_dictation_word_accuracy": accuracy(free_pairs),
        "wake_detected": detected,
        "false_wakes": false_wakes,
        "end_of_speech_to_prompt_ms": percentiles(to_prompt),
        # Of which: until the STT's final segment reached intake (the VAD's silence window,
        # its smoothing, transport and the final decode).
        "end_of_speech_to_final_ms": percentiles(to_final),
        "end_of_speech_to_first_envelope_ms": percentiles(to_envelope),
        "vad_min_silence_s": stack.settings.steward_vad_min_silence_s,
        "heard": [{"said": s, "heard": h} for s, h in pairs[: len(said)]],
        "free_dictation_heard": [{"said": s, "heard": h} for s, h in free_pairs],
        "load_average_1m": {"before": load_before, "after": os.getloadavg()[0]},
        "targets": TARGETS,
    }
    p95 = out["end_of_speech_to_prompt_ms"]["p95"]
    out["misses"] = [
        *(
            ["end_of_speech_to_prompt_ms"]
            if p95 is None or p95 > TARGETS["end_of_speech_to_prompt_ms"]
            else []
        ),
        *(["wake_detected"] if detected != addressed_n else []),
        *(["false_wakes"] if false_wakes else []),
    ]
    return out


def _more(items: list[str], than: int) -> Callable[[], bool]:
    return lambda: len(items) > than


def _first_envelope(publishes: list[tuple[float, str, bytes]], session_id: str) -> float | None:
    for t, topic, packet in publishes:
        if any(env.get("sessionId") == session_id for env in envelopes_in(topic, packet)):
            return t
    return None


def _handler(args: argparse.Namespace) -> int:
    configure_logging("error", "json")
    result = asyncio.run(bounded(run(args.repeats, args.engine), 600, "voice"))
    print_json(result)
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("voice", help="spoken prompts: word accuracy, wake, latency")
    p.add_argument("--json", action="store_true")
    p.add_argument("--repeats", type=int, default=1, help="play the set this many times")
    p.add_argument("--engine", choices=("local", "openai"), default="local")
    p.set_defaults(handler=_handler)
