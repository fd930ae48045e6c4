"""The anthropic provider against a local server speaking the Messages SSE protocol."""

from __future__ import annotations

import asyncio
import base64
import json

import pytest

from steward.actions.registry import ACTIONS
from steward.config import Settings
from steward.fairies.one_shot_runner import OneShotConfig, OneShotRunner
from steward.model.anthropic_model import AnthropicModel
from steward.model.base import PREFILL, ModelError, ModelRequest, Usage
from steward.model.registry import get_model
from steward.ports import PromptInput
from steward.prompt.registry import PARTS
from steward.prompt.system_prompt import flow
from steward_tools.memory_session import MemorySession
from tests.support.anthropic_fake import FakeAnthropic, StartFake

pytestmark = pytest.mark.integration


@pytest.fixture
async def fake(start_fake_anthropic: StartFake) -> FakeAnthropic:
    return await start_fake_anthropic()


def model(fake: FakeAnthropic, attempts: int = 4) -> AnthropicModel:
    return AnthropicModel(
        "claude-sonnet-test",
        api_key="test",
        base_url=f"http://127.0.0.1:{fake.port}",
        attempts=attempts,
        wait_max_s=0.05,
    )


JPEG = b"\xff\xd8\xff\xe0jpeg"
WEBP = b"RIFF\x0c\x00\x00\x00WEBPVP8 webp"


def request(media_type: str = "image/jpeg", data: bytes = JPEG) -> ModelRequest:
    image = {"type": "image", "media_type": media_type, "data": data}
    return ModelRequest(system=["STATIC PREFIX"], user=[{"type": "text", "text": "draw"}, image])


async def collect(m: AnthropicModel, usage: Usage, req: ModelRequest | None = None) -> str:
    return "".join([t async for t in m.stream(req or request(), usage)])


async def test_streams_text_with_usage_cache_and_image(fake: FakeAnthropic) -> None:
    fake.text = "a long streamed answer " * 5
    usage = Usage()
    assert await collect(model(fake), usage) == fake.text
    assert (usage.input_tokens, usage.output_tokens) == (100, 15)
    assert (usage.cache_write_tokens, usage.cache_read_tokens) == (50, 20)
    body = fake.requests[0]
    assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["messages"][0]["content"][1]["source"]["media_type"] == "image/jpeg"
    assert body["messages"][-1] == {"role": "assistant", "content": PREFILL}


async def test_a_webp_screenshot_is_sent_as_image_webp(fake: FakeAnthropic) -> None:
    assert await collect(model(fake), Usage(), request("image/webp", WEBP)) == "hello"
    source = fake.requests[0]["messages"][0]["content"][1]["source"]
    assert source["media_type"] == "image/webp"
    assert base64.b64decode(source["data"]) == WEBP


async def test_an_image_mislabelled_is_refused_and_not_retried(fake: FakeAnthropic) -> None:
    # What the steward's magic-bytes check prevents: the API refuses the whole request.
    with pytest.raises(ModelError) as info:
        await collect(model(fake), Usage(), request("image/webp", JPEG))
    assert "invalid_request_error (400)" in str(info.value) and not info.value.retryable
    assert len(fake.requests) == 1


async def test_retries_429_529_and_error_event(fake: FakeAnthropic) -> None:
    fake.scenarios = ["529", "429", "error_event"]
    assert await collect(model(fake), Usage()) == "hello"
    assert len(fake.requests) == 4


async def test_gives_up_after_attempts(fake: FakeAnthropic) -> None:
    fake.scenarios = ["529"] * 5
    with pytest.raises(ModelError) as info:
        await collect(model(fake, attempts=2), Usage())
    assert info.value.retryable and "overloaded" in str(info.value).lower()
    assert len(fake.requests) == 2


async def test_connection_cut_mid_stream_is_not_retried(fake: FakeAnthropic) -> None:
    fake.scenarios = ["cut"]
    fake.text = "x" * 200
    got: list[str] = []
    with pytest.raises(ModelError) as info:
        async for t in model(fake).stream(request(), Usage()):
            got.append(t)
    assert info.value.started and got and len(fake.requests) == 1


async def test_cancellation_stops_the_stream(fake: FakeAnthropic) -> None:
    fake.text = "y" * 5000
    fake.chunk = 1
    seen = asyncio.Event()

    async def consume() -> None:
        async for _ in model(fake).stream(request(), Usage()):
            seen.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(seen.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_agent_reverts_partial_when_stream_is_cut(fake: FakeAnthropic) -> None:
    fake.scenarios = ["cut"]
    head = '{"_type": "create", "intent": "x", "shape": {"_type": "rectangle", "shapeId": "r", '
    fake.text = head + '"x": 0, "y": 0, "w": 100, "h": 100, "text": "' + "z" * 300 + '"}}]}'
    settings = Settings(anthropic_base_url=f"http://127.0.0.1:{fake.port}")
    provider = get_model("anthropic:claude-sonnet-test", settings)
    session = MemorySession()
    agent = OneShotRunner(OneShotConfig(settings=settings, model=provider))
    outcome = await agent.run(session, PromptInput(message="box", source="http", requester="t"))
    assert outcome.startswith("error:")
    assert any(partial for partial, _ in session.envelopes)  # the box did start to appear
    assert session.browser.shapes == {} and session.browser.in_flight() == []
    assert session.statuses[-1][0] == "error"


async def test_temperature_zero_by_default_and_none_disables(fake: FakeAnthropic) -> None:
    url = f"http://127.0.0.1:{fake.port}"
    provider = get_model("anthropic:claude-sonnet-test", Settings(anthropic_base_url=url))
    await collect(provider, Usage())  # type: ignore[arg-type]
    assert fake.requests[-1]["temperature"] == 0
    off = Settings(anthropic_base_url=url, steward_model_temperature="none")  # type: ignore[arg-type]
    await collect(get_model("anthropic:claude-sonnet-test", off), Usage())  # type: ignore[arg-type]
    assert "temperature" not in fake.requests[-1]


async def test_a_refused_prefill_is_retried_once_without_it(fake: FakeAnthropic) -> None:
    fake.refuse_prefill = True
    fake.text = ' ```json\n{ "actions" : [{"_type": "think", "text": "hi"}]}\n```'
    provider = model(fake)
    # The model wrote the opening itself; callers still get the text after the prefill.
    assert await collect(provider, Usage()) == '{"_type": "think", "text": "hi"}]}\n```'
    assert [r["messages"][-1]["role"] for r in fake.requests] == ["assistant", "user"]
    # Remembered: the next request goes without the prefill at once (a character at a time).
    fake.text = '{"actions": [{"_type": "think", "text": "again"}]}'
    fake.chunk = 1
    assert await collect(provider, Usage()) == '{"_type": "think", "text": "again"}]}'
    assert len(fake.requests) == 3 and fake.requests[-1]["messages"][-1]["role"] == "user"


async def test_a_refused_temperature_is_dropped_once_and_remembered(fake: FakeAnthropic) -> None:
    fake.refuse_temperature = True
    provider = model(fake)
    assert await collect(provider, Usage()) == "hello"
    assert await collect(provider, Usage()) == "hello"
    assert ["temperature" in r for r in fake.requests] == [True, False, False]
    assert all(r["messages"][-1]["role"] == "assistant" for r in fake.requests)


async def test_without_a_prefill_prose_first_is_passed_on(fake: FakeAnthropic) -> None:
    fake.refuse_prefill = True
    fake.chunk = 1
    fake.text = '{"act'
    assert await collect(model(fake), Usage()) == '{"act'  # held, then flushed at the end
    fake.text = 'Sure! {"actions": []}'
    assert await collect(model(fake), Usage()) == fake.text


async def test_the_one_shot_role_model_applies_through_a_prefill_refusing_api(
    fake: FakeAnthropic,
) -> None:
    fake.refuse_prefill = True
    fake.text = json.dumps(
        {
            "actions": [
                {
                    "_type": "create",
                    "intent": "box",
                    "shape": {
                        "_type": "rectangle",
                        "shapeId": "b",
                        "x": 0,
                        "y": 0,
                        "w": 120,
                        "h": 80,
                    },
                },
                {"_type": "message", "text": "Drew a box."},
            ]
        }
    )
    settings = Settings(
        anthropic_base_url=f"http://127.0.0.1:{fake.port}",
        steward_model="scripted",
        steward_model_one_shot="anthropic:claude-one-shot-test",
    )
    session = MemorySession()
    agent = OneShotRunner(OneShotConfig(settings=settings))
    outcome = await agent.run(session, PromptInput(message="box", source="http", requester="t"))
    assert outcome == "done"
    assert [s["id"] for s in session.browser.shapes.values()] == ["b"]
    body = fake.requests[-1]
    assert body["model"] == "claude-one-shot-test" and body["temperature"] == 0
    assert body["messages"][-1]["role"] == "user"
    # The kit's guidance rides in the cached system prefix, each rule in its own section.
    system = "".join(block["text"] for block in body["system"])
    for name in ("create", "review", "update-todo-list", "sendToBack"):
        assert f"### `{name}`\n{flow(ACTIONS[name].guide)}" in system
    assert f"## Viewport\n{flow(PARTS['viewport'].guide)}" in system
