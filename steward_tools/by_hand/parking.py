"""One parked request as files a person can read, and the answer file they write back.

A request becomes a folder `NNN-<label>/`: `system.txt`, `messages.md` (every message in
order, images saved as `image-K.png` and linked), `request.json` (the body with image bytes
left out) and `status.txt` (waiting, answered, timed out, caller gone). The answer is
`answer.txt` in that folder; it is read once it exists and has stopped changing, so a person
may write it in place or (better) write `answer.txt.tmp` and rename it.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image

from steward.model.base import estimate_tokens

ANSWER = "answer.txt"
STATUS = "status.txt"
_FOLDER = re.compile(r"^(\d{3,})-")


def label_for(body: dict[str, Any]) -> str:
    """The folder label of a request: its model name (one per role when the steward's role
    models name them, e.g. `anthropic:drone`), reduced to safe characters."""
    label = re.sub(r"[^A-Za-z0-9_.-]+", "-", str(body.get("model") or "model")).strip("-.")
    return label[:40] or "model"


def next_number(root: Path) -> int:
    """One past the highest folder number under `root`: a restarted server never reuses one."""
    numbers = [int(m.group(1)) for p in root.iterdir() if (m := _FOLDER.match(p.name))]
    return max(numbers, default=0) + 1


@dataclass
class Parked:
    """A request parked on disk: its folder, and its size in tokens and images."""

    folder: Path
    input_tokens: int
    images: int


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _save_png(source: dict[str, Any], path: Path) -> tuple[int, int]:
    """Decode a base64 image block (WebP, JPEG, PNG, GIF) and write it as PNG: its size."""
    try:
        raw = base64.b64decode(str(source.get("data", "")), validate=True)
        with Image.open(io.BytesIO(raw)) as img:
            img.load()
            img.save(path, format="PNG")
            return img.size
    except (binascii.Error, ValueError, OSError) as err:
        raise ValueError(f"image {path.name} cannot be decoded: {err}") from err


def _image_tokens(size: tuple[int, int]) -> int:
    # The Messages API bills about width * height / 750 tokens per image.
    return max(1, size[0] * size[1] // 750)


def park(root: Path, number: int, body: dict[str, Any]) -> Parked:
    """Write the request into a new folder under `root`; raises ValueError on a bad body."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ValueError("the request has no messages")
    folder = root / f"{number:03d}-{label_for(body)}"
    folder.mkdir(parents=True)
    try:
        return _write(folder, body, messages)
    except ValueError as err:
        set_status(folder, f"refused: {err}")
        raise


def _write(folder: Path, body: dict[str, Any], messages: list[Any]) -> Parked:
    system = "\n\n".join(b.get("text", "") for b in _blocks(body.get("system")))
    (folder / "system.txt").write_text(system, encoding="utf-8")
    tokens = estimate_tokens(system)
    lines = [f"# Request {folder.name}", ""]
    stripped: list[dict[str, Any]] = []
    images = 0
    for n, message in enumerate(messages, 1):
        role = str(message.get("role", "?")) if isinstance(message, dict) else "?"
        content = message.get("content") if isinstance(message, dict) else None
        lines += [f"## {n}. {role}", ""]
        kept: list[dict[str, Any]] = []
        for block in _blocks(content):
            if block.get("type") == "image":
                images += 1
                name = f"image-{images}.png"
                size = _save_png(block.get("source") or {}, folder / name)
                tokens += _image_tokens(size)
                lines += [f"![{name} ({size[0]}x{size[1]})]({name})", ""]
                kept.append(
                    {"type": "image", "saved_as": name, "width": size[0], "height": size[1]}
                )
            else:
                text = str(block.get("text", ""))
                tokens += estimate_tokens(text)
                lines += [text, ""]
                kept.append(block)
        stripped.append({"role": role, "content": kept})
    if isinstance(messages[-1], dict) and messages[-1].get("role") == "assistant":
        lines += [
            "---",
            "The last turn is the assistant's prefill: write answer.txt as its continuation,",
            "or as the whole response (a leading copy of the prefill is dropped).",
            "",
        ]
    (folder / "messages.md").write_text("\n".join(lines), encoding="utf-8")
    raw = {k: v for k, v in body.items() if k != "messages"} | {"messages": stripped}
    (folder / "request.json").write_text(json.dumps(raw, indent=2), encoding="utf-8")
    set_status(folder, "waiting: write answer.txt (atomically: answer.txt.tmp, then rename)")
    return Parked(folder=folder, input_tokens=tokens, images=images)


def continuation(body: dict[str, Any], answer: str) -> str:
    """The answer as the model's continuation: when the request ends in an assistant turn
    (the prefill) and the person wrote the whole response, their copy of that turn goes."""
    messages = body.get("messages") or []
    last = messages[-1] if messages and isinstance(messages[-1], dict) else {}
    if last.get("role") != "assistant":
        return answer
    prefill = "".join(str(b.get("text", "")) for b in _blocks(last.get("content"))).strip()
    start = answer.lstrip()
    return start[len(prefill) :] if prefill and start.startswith(prefill) else answer


def set_status(folder: Path, status: str) -> None:
    (folder / STATUS).write_text(status + "\n", encoding="utf-8")


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_size, st.st_mtime_ns


async def wait_for_answer(folder: Path, *, poll_s: float = 0.2) -> str:
    """The text of `answer.txt` once it exists and two polls in a row see it unchanged
    (a file being written in place is not read half-way). Unbounded: the caller bounds it."""
    path = folder / ANSWER
    seen: tuple[int, int] | None = None
    while True:
        stamp = _stamp(path)
        if stamp is not None and stamp == seen:
            return path.read_text(encoding="utf-8")
        seen = stamp
        await asyncio.sleep(poll_s)


def write_answer(folder: Path, text: str) -> Path:
    """Write an answer atomically (a temporary file renamed into place)."""
    tmp = folder / (ANSWER + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    return tmp.replace(folder / ANSWER)


def pending(root: Path) -> list[Path]:
    """The folders still waiting for an answer, oldest first."""
    out = []
    for folder in sorted(p for p in root.iterdir() if _FOLDER.match(p.name) and p.is_dir()):
        status = folder / STATUS
        if status.exists() and status.read_text(encoding="utf-8").startswith("waiting"):
            out.append(folder)
    return out
