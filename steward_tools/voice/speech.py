"""Real speech for tests and the voice bench: espeak-ng speaks, sox makes it 16 kHz mono.

`make setup` installs both (Debian packages). The audio is padded with silence on both
sides, as a person pauses before and after talking, and the offset where the voice ends is
measured from the samples, so latency is counted from the real end of speech.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import wave
from dataclasses import dataclass
from pathlib import Path

from steward.voice.local_stt import SAMPLE_RATE

LEAD_S = 0.4
TAIL_S = 1.2
# |sample| above this counts as voice (s16; espeak's quietest phonemes stay well above).
VOICE_LEVEL = 500


class SpeechToolMissing(RuntimeError):
    """espeak-ng or sox is not installed (run `make setup-voice`)."""


@dataclass(frozen=True)
class SpokenText:
    """A sentence spoken to a WAV file: the text, the file, its length and where the voice ends."""

    text: str
    path: Path
    duration_s: float
    speech_end_s: float  # offset of the last voiced sample


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise SpeechToolMissing(f"{name} is not installed: run `make setup-voice`")
    return path


def read_pcm(path: Path) -> bytes:
    with wave.open(str(path), "rb") as w:
        if (w.getframerate(), w.getnchannels(), w.getsampwidth()) != (SAMPLE_RATE, 1, 2):
            raise ValueError(f"{path}: expected 16 kHz mono s16 audio")
        return w.readframes(w.getnframes())


def speech_end_s(pcm: bytes) -> float:
    samples = memoryview(pcm).cast("h")
    for i in range(len(samples) - 1, -1, -1):
        if abs(samples[i]) > VOICE_LEVEL:
            return (i + 1) / SAMPLE_RATE
    return 0.0


def speak(
    text: str,
    path: Path,
    *,
    voice: str = "en-us",
    words_per_min: int = 160,
    lead_s: float = LEAD_S,
) -> SpokenText:
    """Write `text` spoken as a 16 kHz mono WAV at `path`, after `lead_s` of silence."""
    espeak, sox = _tool("espeak-ng"), _tool("sox")
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "raw.wav"
        subprocess.run(
            [espeak, "-v", voice, "-s", str(words_per_min), "-w", str(raw), text],
            check=True,
            capture_output=True,
        )
        resample = ["-r", str(SAMPLE_RATE), "-c", "1", "-b", "16"]
        pad = ["pad", str(lead_s), str(TAIL_S)]
        subprocess.run([sox, str(raw), *resample, str(path), *pad], check=True, capture_output=True)
    pcm = read_pcm(path)
    return SpokenText(text, path, len(pcm) / 2 / SAMPLE_RATE, speech_end_s(pcm))


# `python -m steward_tools.voice.speech OUT.wav LEAD_S TEXT` (the browser e2e)
if __name__ == "__main__":
    import sys

    speak(sys.argv[3], Path(sys.argv[1]), lead_s=float(sys.argv[2]))
