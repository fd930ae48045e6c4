"""The by-hand Messages server: `POST /v1/messages` parks the request (`parking`), keeps the
stream open with pings while a person writes the answer, then streams it back.

The stream opens at once (message_start, then a ping every few seconds) so the caller's read
timeout never fires while the person reads; a request nobody answers within `timeout_s` ends
with an `error` event naming the folder. Each answered request is appended to the transcript
(`transcript.jsonl` in the root), which `replay:` plays back in the same order; a line names
the fairy that asked when the request says who it is, so each fairy replays its own lines.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from steward.model.base import estimate_tokens
from steward.obs.logging import get_logger
from steward_tools.by_hand import parking
from steward_tools.rigs.anthropic_server import (
    PING,
    block_stop,
    error_event,
    message_end,
    message_start,
    split_text,
    text_block_start,
    text_delta,
)

log = get_logger(__name__)

TRANSCRIPT = "transcript.jsonl"
# How a fairy's prompt introduces it ("You are Clover (id fairy-2), a fairy. ...").
_FAIRY_ID = re.compile(r"\(id ([^()\s]+)\), a fairy\.")


def asking_fairy(body: dict[str, Any]) -> str | None:
    """The id of the fairy a Messages request comes from, if its prompt says who it is."""
    texts: list[str] = []

    def collect(content: Any) -> None:
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and isinstance(block.get("text"), str):
                    texts.append(block["text"])

    collect(body.get("system"))
    for message in body.get("messages") or []:
        if isinstance(message, dict):
            collect(message.get("content"))
    for text in texts:
        found = _FAIRY_ID.search(text)
        if found:
            return found.group(1)
    return None


def append_transcript(root: Path, entry: dict[str, Any]) -> None:
    """One line per answered request, in the order answers were given: `replay:` reads it."""
    with (root / TRANSCRIPT).open("a", encoding="utf-8") as out:
        out.write(json.dumps(entry) + "\n")


@dataclass
class HandServer:
    """The by-hand Messages server: parks each request, streams back the answer a person writes."""

    root: Path
    timeout_s: float = 1800.0
    host: str = "127.0.0.1"
    port: int = 0
    ping_s: float = 5.0
    poll_s: float = 0.2
    chunk_chars: int = 24
    chunk_delay_s: float = 0.01
    _runner: web.AppRunner | None = None
    _number: int = 0
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def start(self) -> str:
        self.root.mkdir(parents=True, exist_ok=True)
        self._number = parking.next_number(self.root)
        app = web.Application(client_max_size=64 * 1024 * 1024)  # screenshots are large
        app.router.add_post("/v1/messages", self.handle)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        await web.TCPSite(self._runner, self.host, self.port).start()
        self.port = int(self._runner.addresses[0][1])
        return self.base_url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
            if not isinstance(body, dict):
                raise ValueError("the body is not a JSON object")
            async with self._lock:  # numbers are unique across concurrent requests
                number, self._number = self._number, self._number + 1
                parked = await asyncio.to_thread(parking.park, self.root, number, body)
        except ValueError as err:
            log.warning("by_hand_bad_request", error=str(err))
            error = {"type": "invalid_request_error", "message": str(err)}
            return web.json_response({"type": "error", "error": error}, status=400)
        folder = parked.folder
        log.info("by_hand_parked", folder=str(folder), images=parked.images)
        print(f"parked {folder} ({parked.images} image(s)): write {folder / parking.ANSWER}")
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        usage = {"input_tokens": parked.input_tokens, "output_tokens": 1}
        await resp.write(message_start(str(body.get("model", "by-hand")), usage, f"msg_{number}"))
        written = await self._await_answer(request, resp, folder)
        if written is None:
            return resp
        answer = parking.continuation(body, written)
        await resp.write(text_block_start())
        for piece in split_text(answer, self.chunk_chars):
            await resp.write(text_delta(piece))
            await asyncio.sleep(self.chunk_delay_s)  # a stream, as a model's would arrive
        await resp.write(block_stop())
        output_tokens = estimate_tokens(answer)
        await resp.write(message_end(output_tokens))
        parking.set_status(folder, f"answered ({output_tokens} output tokens)")
        entry: dict[str, Any] = {"turn": number, "folder": folder.name, "model": body.get("model")}
        fairy = asking_fairy(body)
        if fairy is not None:
            entry["fairy"] = fairy
        entry["text"] = answer
        await asyncio.to_thread(append_transcript, self.root, entry)
        log.info("by_hand_answered", folder=str(folder), output_tokens=output_tokens)
        return resp

    async def _await_answer(
        self, request: web.Request, resp: web.StreamResponse, folder: Path
    ) -> str | None:
        """The answer, or None once the wait timed out (an error event sent) or the caller
        left (nothing more to send)."""
        deadline = time.monotonic() + self.timeout_s
        waiter = asyncio.ensure_future(parking.wait_for_answer(folder, poll_s=self.poll_s))
        try:
            while (left := deadline - time.monotonic()) > 0:
                done, _ = await asyncio.wait({waiter}, timeout=min(self.ping_s, left))
                if done:
                    return waiter.result()
                if request.transport is None or request.transport.is_closing():
                    parking.set_status(folder, "caller gone: do not answer")
                    log.info("by_hand_caller_gone", folder=str(folder))
                    return None
                await resp.write(PING)
        except ConnectionResetError:
            parking.set_status(folder, "caller gone: do not answer")
            return None
        finally:
            waiter.cancel()
        message = (
            f"model by hand: nobody answered {folder.name} within {self.timeout_s:g} s "
            f"(write {parking.ANSWER} in {folder})"
        )
        parking.set_status(folder, f"timed out after {self.timeout_s:g} s")
        log.warning("by_hand_timeout", folder=str(folder), timeout_s=self.timeout_s)
        await resp.write(error_event("timeout_error", message))
        return None
