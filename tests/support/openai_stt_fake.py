"""A local aiohttp server speaking OpenAI's file transcription protocol.

`POST /v1/audio/transcriptions` (multipart: `file` a WAV, `model`, `response_format`) →
`{"text": ...}`, or 401 without the bearer key, 400 for a file that is not 16-bit WAV. It
answers only from the audio it is sent: pocketsphinx with the steward's command grammar
decodes the uploaded file, so what comes back depends on what was said.
"""

from __future__ import annotations

import io
import wave
from dataclasses import dataclass, field

from aiohttp import web

from steward.voice.local_stt import GRAMMAR, SAMPLE_RATE, decode_pcm, make_decoder


def _pcm16k(data: bytes) -> bytes:
    with wave.open(io.BytesIO(data), "rb") as w:
        if w.getsampwidth() != 2 or w.getnchannels() != 1 or w.getframerate() != SAMPLE_RATE:
            raise ValueError("expected 16 kHz mono 16-bit WAV")
        return w.readframes(w.getnframes())


@dataclass
class FakeOpenAITranscription:
    api_key: str = "test-openai-key"
    requests: list[dict[str, str]] = field(default_factory=list)
    port: int = 0
    _runner: web.AppRunner | None = None

    async def start(self) -> str:
        app = web.Application()
        app.router.add_post("/v1/audio/transcriptions", self.handle)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = int(self._runner.addresses[0][1])
        return f"http://127.0.0.1:{self.port}/v1"

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def handle(self, request: web.Request) -> web.Response:
        if request.headers.get("Authorization") != f"Bearer {self.api_key}":
            error = {"message": "Incorrect API key provided", "type": "invalid_request_error"}
            return web.json_response({"error": error}, status=401)
        form = await request.post()
        upload = form.get("file")
        if not isinstance(upload, web.FileField):
            return web.json_response({"error": {"message": "file is required"}}, status=400)
        try:
            pcm = _pcm16k(upload.file.read())
        except (ValueError, wave.Error, EOFError) as err:
            return web.json_response({"error": {"message": str(err)}}, status=400)
        text = decode_pcm(make_decoder(GRAMMAR), pcm)
        self.requests.append({"model": str(form.get("model")), "text": text})
        return web.json_response({"text": text})
