"""The model by hand over real HTTP: the steward's own `anthropic:` provider (the SDK) talks to
`HandServer`; the test plays the person, reading the parked files and writing answers."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from PIL import Image

from steward.model.anthropic_model import AnthropicModel
from steward.model.base import PREFILL, ModelError, ModelRequest, Usage, estimate_tokens
from steward.model.replay import ReplayModel
from steward_tools.by_hand import parking
from steward_tools.by_hand.server import TRANSCRIPT, HandServer
from steward_tools.waiting import wait_until

ANSWER = '{"actions": [{"_type": "message", "text": "a red circle, drawn by hand"}]}'


def _image(fmt: str, size: tuple[int, int], color: str) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, format=fmt)
    return out.getvalue()


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[HandServer]:
    hand = HandServer(tmp_path / "parked", timeout_s=20.0, ping_s=0.2, poll_s=0.05)
    await hand.start()
    try:
        yield hand
    finally:
        await hand.stop()


def _model(server: HandServer, name: str) -> AnthropicModel:
    return AnthropicModel(name, api_key="by-hand", base_url=server.base_url, attempts=1)


def _request(text: str, images: list[tuple[str, bytes]] = ()) -> ModelRequest:  # type: ignore[assignment]
    user: list[dict[str, object]] = [{"type": "text", "text": text}]
    for media_type, data in images:
        user.append({"type": "image", "media_type": media_type, "data": data})
    return ModelRequest(system=["You are a fairy.", "Draw well."], user=user)


async def _collect(model: AnthropicModel, request: ModelRequest, usage: Usage) -> str:
    return "".join([piece async for piece in model.stream(request, usage)])


async def _parked(root: Path, count: int) -> list[Path]:
    await wait_until(lambda: len(parking.pending(root)) >= count, 10, f"{count} parked")
    return parking.pending(root)


async def test_a_request_parks_as_files_and_the_written_answer_streams_back(
    server: HandServer,
) -> None:
    webp = _image("WEBP", (64, 48), "red")
    jpeg = _image("JPEG", (32, 32), "blue")
    usage = Usage()
    call = asyncio.create_task(
        _collect(
            _model(server, "one-shot"),
            _request("draw a red circle", [("image/webp", webp), ("image/jpeg", jpeg)]),
            usage,
        )
    )
    (folder,) = await _parked(server.root, 1)
    assert folder.name == "001-one-shot"
    assert (folder / "system.txt").read_text() == "You are a fairy.\n\nDraw well."
    md = (folder / "messages.md").read_text()
    assert "## 1. user" in md and "draw a red circle" in md
    assert "](image-1.png)" in md and "](image-2.png)" in md
    assert "## 2. assistant" in md and PREFILL in md  # the prefill turn is shown
    with Image.open(folder / "image-1.png") as img:
        red = img.getpixel((10, 10))
        assert isinstance(red, tuple) and red[0] > 200
        assert (img.format, img.size) == ("PNG", (64, 48))
    with Image.open(folder / "image-2.png") as img:
        assert (img.format, img.size) == ("PNG", (32, 32))
    raw = (folder / "request.json").read_text()
    assert "base64" not in raw and json.loads(raw)["model"] == "one-shot"
    assert not call.done()  # it waits for the person
    parking.write_answer(folder, ANSWER)
    async with asyncio.timeout(10):
        text = await call
    # The server drops the answer's own copy of the prefill: the rest follows the prefill.
    assert PREFILL + text == ANSWER
    assert usage.output_tokens == estimate_tokens(text)
    assert usage.input_tokens > estimate_tokens("You are a fairy.\n\nDraw well.")
    assert (folder / parking.STATUS).read_text().startswith("answered")
    (line,) = (server.root / TRANSCRIPT).read_text().splitlines()
    assert json.loads(line) == {
        "turn": 1,
        "folder": "001-one-shot",
        "model": "one-shot",
        "text": text,
    }


async def test_nobody_answering_ends_the_stream_with_a_clear_error(tmp_path: Path) -> None:
    hand = HandServer(tmp_path, timeout_s=0.6, ping_s=0.1, poll_s=0.05)
    await hand.start()
    try:
        async with asyncio.timeout(10):
            with pytest.raises(ModelError, match="timeout_error"):
                await _collect(_model(hand, "drone"), _request("draw"), Usage())
    finally:
        await hand.stop()
    folder = tmp_path / "001-drone"
    assert (folder / parking.STATUS).read_text().startswith("timed out after 0.6 s")
    assert not (tmp_path / TRANSCRIPT).exists()


async def test_concurrent_requests_park_separately_and_get_their_own_answers(
    server: HandServer,
) -> None:
    # Bob's prompt says which fairy he is (as fairies' prompts do); alice's does not.
    intro = {"alice": "", "bob": "You are Bob (id fairy-7), a fairy. "}
    calls = {
        name: asyncio.create_task(
            _collect(_model(server, name), _request(f"{intro[name]}I am {name}"), Usage())
        )
        for name in ("alice", "bob")
    }
    folders = await _parked(server.root, 2)
    assert sorted(f.name.split("-", 1)[1] for f in folders) == ["alice", "bob"]
    assert len({f.name[:3] for f in folders}) == 2  # distinct numbers
    for folder in reversed(folders):  # answered in the other order
        who = folder.name.split("-", 1)[1]
        assert f"I am {who}" in (folder / "messages.md").read_text()
        parking.write_answer(folder, f'{{"_type": "message", "text": "for {who}"}}]}}')
    async with asyncio.timeout(10):
        for who, call in calls.items():
            assert f"for {who}" in await call
    turns = [json.loads(x) for x in (server.root / TRANSCRIPT).read_text().splitlines()]
    assert len(turns) == 2 and all(f"for {t['model']}" in t["text"] for t in turns)
    # A turn names the fairy that asked, so `replay:` gives each fairy its own turns.
    assert {t["model"]: t.get("fairy") for t in turns} == {"alice": None, "bob": "fairy-7"}


async def test_a_half_written_temporary_answer_is_not_read(server: HandServer) -> None:
    call = asyncio.create_task(_collect(_model(server, "m"), _request("x"), Usage()))
    (folder,) = await _parked(server.root, 1)
    (folder / (parking.ANSWER + ".tmp")).write_text('{"_type": "message", "te')
    # A later request answered whole after that: once its answer is read, the server has
    # looked at the first folder too (both wait on one poll cadence) and left it waiting.
    later = asyncio.create_task(_collect(_model(server, "m"), _request("y"), Usage()))
    (second,) = [f for f in await _parked(server.root, 2) if f != folder]
    parking.write_answer(second, '{"_type": "message", "text": "later"}]}')
    async with asyncio.timeout(10):
        assert "later" in await later
    assert not call.done()
    parking.write_answer(folder, '{"_type": "message", "text": "whole"}]}')
    async with asyncio.timeout(10):
        assert "whole" in await call


async def test_a_bad_body_gets_a_400_and_the_server_keeps_serving(server: HandServer) -> None:
    async with aiohttp.ClientSession() as http, asyncio.timeout(10):
        async with http.post(f"{server.base_url}/v1/messages", json={"model": "m"}) as resp:
            assert resp.status == 400
            assert "no messages" in (await resp.json())["error"]["message"]
    call = asyncio.create_task(_collect(_model(server, "m"), _request("x"), Usage()))
    (folder,) = await _parked(server.root, 1)
    assert folder.name == "002-m"  # numbers never repeat, even for refused bodies
    parking.write_answer(folder, '{"_type": "message", "text": "ok"}]}')
    async with asyncio.timeout(10):
        assert "ok" in await call


async def test_a_restarted_server_numbers_on_from_the_folders_it_finds(tmp_path: Path) -> None:
    (tmp_path / "007-old").mkdir()
    hand = HandServer(tmp_path, timeout_s=0.3, ping_s=0.1, poll_s=0.05)
    await hand.start()
    try:
        async with asyncio.timeout(10):
            with pytest.raises(ModelError):
                await _collect(_model(hand, "m"), _request("x"), Usage())
    finally:
        await hand.stop()
    assert (tmp_path / "008-m" / "system.txt").exists()


async def test_replay_plays_a_transcript_back_one_turn_per_call(tmp_path: Path) -> None:
    transcript = tmp_path / TRANSCRIPT
    lines = [
        {"turn": 1, "folder": "001-a", "model": "a", "text": ANSWER},
        {"turn": 2, "folder": "002-a", "model": "a", "text": '{"_type": "message"}]}'},
    ]
    transcript.write_text("".join(json.dumps(x) + "\n" for x in lines))
    request = _request("x")
    got = []
    for _ in lines:
        model = ReplayModel(transcript)  # a fresh model per run, as the fairies build them
        got.append("".join([c async for c in model.stream(request, Usage())]))
    assert got == [ANSWER[len(PREFILL) :], '{"_type": "message"}]}']
    with pytest.raises(ModelError, match="no turn 3"):
        _ = [c async for c in ReplayModel(transcript).stream(request, Usage())]
