"""The `openai:` provider against a local server speaking streaming Chat Completions."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from structlog.testing import capture_logs

from steward.config import Settings
from steward.fairies.one_shot_runner import OneShotConfig, OneShotRunner
from steward.model.base import ModelError, ModelRequest, Usage
from steward.model.openai_model import OpenAIModel
from steward.model.registry import get_model
from steward.ports import PromptInput
from steward_tools.memory_session import MemorySession
from steward_tools.rigs.anthropic_server import Reply, split_text
from steward_tools.rigs.openai_server import ChatCompletionsServer

pytestmark = pytest.mark.integration

ANSWER = '{"actions": [{"_type": "think", "text": "hi"}]}'
AFTER_PREFILL = '{"_type": "think", "text": "hi"}]}'
WEBP = b"RIFF\x0c\x00\x00\x00WEBPVP8 webp"
JPEG = b"\xff\xd8\xff\xe0jpeg"


class Fixed:
    """Answers every request with `text`, in pieces of `chunk` characters."""

    def __init__(self, text: str = ANSWER, chunk: int = 7) -> None:
        self.text, self.chunk = text, chunk

    def __call__(self, body: dict[str, Any]) -> Reply:
        return Reply(split_text(self.text, self.chunk))


@pytest.fixture
async def server() -> AsyncIterator[ChatCompletionsServer]:
    server = ChatCompletionsServer(responder=Fixed())
    await server.start()
    yield server
    await server.stop()


def model(server: ChatCompletionsServer, attempts: int = 4, key: str | None = "k") -> OpenAIModel:
    return OpenAIModel(
        "gpt-test", api_key=key, base_url=server.base_url, attempts=attempts, wait_max_s=0.05
    )


def request(media_type: str = "image/webp", data: bytes = WEBP) -> ModelRequest:
    image = {"type": "image", "media_type": media_type, "data": data}
    return ModelRequest(
        system=["STATIC PREFIX " * 50], user=[{"type": "text", "text": "draw"}, image]
    )


async def collect(m: OpenAIModel, usage: Usage, req: ModelRequest | None = None) -> str:
    async with asyncio.timeout(30):
        return "".join([t async for t in m.stream(req or request(), usage)])


async def run_agent(server: ChatCompletionsServer) -> tuple[str, MemorySession]:
    settings = Settings(
        openai_base_url=server.base_url,
        steward_model="scripted",
        steward_model_one_shot="openai:gpt-one-shot-test",
    )
    session = MemorySession()
    agent = OneShotRunner(OneShotConfig(settings=settings))
    async with asyncio.timeout(60):
        outcome = await agent.run(session, PromptInput(message="box", source="http", requester="t"))
    return outcome, session


async def test_streams_text_after_the_opening_with_image_usage_and_cache(
    server: ChatCompletionsServer,
) -> None:
    provider = model(server)
    first, second = Usage(), Usage()
    assert await collect(provider, first) == AFTER_PREFILL
    assert await collect(provider, second) == AFTER_PREFILL
    body = server.requests[0]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["model"] == "gpt-test" and body["temperature"] == 0
    assert body["messages"][0] == {"role": "system", "content": "STATIC PREFIX " * 50}
    text, image = body["messages"][1]["content"]
    assert text == {"type": "text", "text": "draw"}
    url = image["image_url"]["url"]
    assert url.startswith("data:image/webp;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == WEBP
    assert server.headers[0]["Authorization"] == "Bearer k"
    # The static prefix is the same in both requests: the second reads it from the cache.
    assert (first.input_tokens, first.output_tokens, first.cache_read_tokens) == (100, 15, 0)
    assert second.cache_read_tokens > 100 and second.input_tokens == 100


async def test_a_mislabelled_image_is_refused_and_not_retried(
    server: ChatCompletionsServer,
) -> None:
    with pytest.raises(ModelError) as info:
        await collect(model(server), Usage(), request("image/webp", JPEG))
    assert "HTTP 400" in str(info.value) and "image/webp" in str(info.value)
    assert not info.value.retryable and len(server.requests) == 1


async def test_overload_and_rate_limits_are_retried(server: ChatCompletionsServer) -> None:
    server.scenarios = ["429", "529", "503", "error_frame"]
    assert await collect(model(server, attempts=5), Usage()) == AFTER_PREFILL
    assert len(server.requests) == 5


async def test_a_stream_that_ends_early_is_retried_only_before_text(
    server: ChatCompletionsServer,
) -> None:
    server.scenarios = ["empty"]  # a 200 stream closed before any chunk: asked again
    assert await collect(model(server), Usage()) == AFTER_PREFILL
    assert len(server.requests) == 2
    server.scenarios = ["truncated"]  # half the answer, then closed without [DONE]
    with pytest.raises(ModelError) as info:
        await collect(model(server), Usage())
    assert info.value.started and "ended before it was complete" in str(info.value)
    assert len(server.requests) == 3


async def test_a_server_without_usage_or_done_is_complete_after_its_finish(
    server: ChatCompletionsServer,
) -> None:
    server.scenarios = ["no_usage"]
    usage = Usage()
    assert await collect(model(server), usage) == AFTER_PREFILL
    assert len(server.requests) == 1
    # Estimated from the text alone: the screenshot's base64 is not counted as prompt.
    assert 100 < usage.input_tokens < 400 and usage.output_tokens == len(ANSWER) // 4


async def test_a_stream_cut_mid_way_is_not_retried(server: ChatCompletionsServer) -> None:
    server.responder = Fixed('{"actions": [{"_type": "think", "text": "' + "z" * 300 + '"}]}')
    server.scenarios = ["cut"]
    got: list[str] = []
    with pytest.raises(ModelError) as info:
        async with asyncio.timeout(30):
            async for t in model(server).stream(request(), Usage()):
                got.append(t)
    assert info.value.started and got and len(server.requests) == 1
    assert "connection" in str(info.value)


async def test_a_500_ends_the_run_with_a_clear_chat_message(server: ChatCompletionsServer) -> None:
    server.scenarios = ["500"] * 10
    with capture_logs() as logs:
        outcome, session = await run_agent(server)
    assert outcome.startswith("error:") and "HTTP 500" in outcome
    chats = [text for role, text, _ in session.chats if role == "system"]
    assert any("The model failed: openai:gpt-one-shot-test: HTTP 500" in c for c in chats), chats
    assert session.statuses[-1][0] == "error"
    assert len(server.requests) == 4  # retried, then given up
    assert any(e["event"] == "model_stream_failed" for e in logs)


@pytest.mark.parametrize(
    ("scenario", "shown"),
    [("garbage", "<html><body><h1>502 Bad Gateway"), ("garbage_frame", "<<not json at all>>")],
)
async def test_garbage_ends_the_run_with_a_clear_chat_message_and_a_log_line(
    server: ChatCompletionsServer, scenario: str, shown: str
) -> None:
    server.scenarios = [scenario]
    with capture_logs() as logs:
        outcome, session = await run_agent(server)
    assert outcome.startswith("error:")
    chats = [text for role, text, _ in session.chats if role == "system"]
    assert any("is not a Chat Completions stream" in c and shown in c for c in chats), chats
    assert len(server.requests) == 1  # garbage is not asked again
    failed = [e for e in logs if e["event"] == "model_stream_failed"]
    assert failed and failed[0]["model"] == "openai:gpt-one-shot-test"
    assert session.browser.shapes == {}


async def test_the_one_shot_role_model_draws(server: ChatCompletionsServer) -> None:
    box = {"_type": "rectangle", "shapeId": "b", "x": 0, "y": 0, "w": 120, "h": 80}
    actions = [
        {"_type": "create", "intent": "box", "shape": box},
        {"_type": "message", "text": "Drew a box."},
    ]
    # Prose and a fence around the object, as models without a prefill often write.
    server.responder = Fixed("Here you go:\n```json\n" + json.dumps({"actions": actions}) + "\n```")
    outcome, session = await run_agent(server)
    assert outcome == "done"
    assert [s["id"] for s in session.browser.shapes.values()] == ["b"]
    assert server.requests[-1]["model"] == "gpt-one-shot-test"
    assert "Authorization" not in server.headers[-1]  # no key set: a local server needs none


async def test_refused_temperature_and_max_tokens_are_dropped_once_and_remembered(
    server: ChatCompletionsServer,
) -> None:
    server.refuse_temperature = server.refuse_max_tokens = True
    provider = model(server)
    assert await collect(provider, Usage()) == AFTER_PREFILL
    assert await collect(provider, Usage()) == AFTER_PREFILL
    assert ["temperature" in r for r in server.requests] == [True, False, False, False]
    assert ["max_tokens" in r for r in server.requests] == [True, True, False, False]
    assert server.requests[-1]["max_completion_tokens"] == 8192


async def test_a_limit_past_a_short_context_is_dropped(server: ChatCompletionsServer) -> None:
    server.context_tokens = 4096
    assert await collect(model(server), Usage()) == AFTER_PREFILL
    assert ["max_tokens" in r for r in server.requests] == [True, False]
    assert "max_completion_tokens" not in server.requests[-1]


async def test_cancellation_stops_the_stream(server: ChatCompletionsServer) -> None:
    server.responder = Fixed('{"actions": [' + "y" * 5000, chunk=1)
    seen = asyncio.Event()

    async def consume() -> None:
        async for _ in model(server).stream(request(), Usage()):
            seen.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(seen.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)


async def test_registry_builds_the_provider_from_settings(server: ChatCompletionsServer) -> None:
    settings = Settings(openai_base_url=server.base_url, openai_api_key="sk-local")  # type: ignore[arg-type]
    provider = get_model("openai:qwen-test", settings)
    assert provider.name == "openai:qwen-test"
    assert "".join([t async for t in provider.stream(request(), Usage())]) == AFTER_PREFILL
    assert server.headers[-1]["Authorization"] == "Bearer sk-local"
    with pytest.raises(ModelError, match="openai:<model>"):
        get_model("openai:", settings)
