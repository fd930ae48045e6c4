"""`steward bench abuse`: what a participant or an HTTP caller sends to speak for someone
else or to break the room: spoofed captions, poisoned relayed records, a participant named
like the HTTP API's runs, caller-chosen metric labels, and ids Postgres cannot store.

Each attempt follows the bench's rule (`steward_tools.bench.abuse.Abuse.attempt`): refused
when the steward refused it, accepted wrongly when the attack got what it wanted.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import TYPE_CHECKING, Any

import aiohttp
from livekit import rtc

from steward.api.app import RUN_PATH
from steward.protocol.names import TOPIC_EDIT, TOPIC_TRANSCRIPTION
from steward.voice.captions import caption_attributes

if TYPE_CHECKING:
    from steward_tools.bench.abuse import Abuse

PROMPT = "draw a flow chart of our signup"
# Requests to GET with random session ids: each was once a new metric series.
LABEL_PROBES = 500
_REJECTIONS = "steward_rejected_inbound_total"


def _record(sid: str, **over: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": sid,
        "type": "geo",
        "x": 0.0,
        "y": 0.0,
        "rotation": 0.0,
        "parentId": None,
        "props": {"geo": "rectangle", "w": 100.0, "h": 60.0},
    }
    record.update(over)
    return record


# Records a participant relays to break every later prompt, or to reach every browser
# unchecked.
POISONED = {
    "relay_overflowing_geometry": _record(
        "p-huge", x=1e308, y=-1e308, props={"geo": "rectangle", "w": 1e308, "h": 1e308}
    ),
    "relay_page_record": _record("page:p-evil", type="page"),
    "relay_binding_record": _record("p-bind", typeName="binding", type="arrow"),
    "relay_dangling_references": _record(
        "p-dangle", type="arrow", parentId="nowhere", bindings={"start": "nowhere", "end": None}
    ),
}


def _rejections(a: Abuse, topic: str, who: str, reason: str | None = None) -> int:
    return sum(
        1
        for t, w, r in a.runtime.rejected
        if (t, w) == (topic, who) and (reason is None or r == reason)
    )


async def _camera(room: rtc.Room) -> str:
    """A track of ann's whose id a spoofer names. A camera, not a microphone: a microphone
    would load the speech engine into the steward and blur the bench's memory figure (the
    integration test `test_safety_input` captions a real microphone the steward hears)."""
    track = rtc.LocalVideoTrack.create_video_track("camera", rtc.VideoSource(16, 16))
    options = rtc.TrackPublishOptions(source=rtc.TrackSource.SOURCE_CAMERA)
    publication = await room.local_participant.publish_track(track, options)
    return str(publication.sid)


async def caption_attacks(a: Abuse) -> None:
    """Captions of ann's track from a participant the deployment does not trust."""
    track = await _camera(a.ann.room)
    ivy = await a.client("ivy", can_prompt=False)

    async def caption(text: str) -> None:
        attrs = caption_attributes(f"SG_{uuid.uuid4().hex[:6]}", track, final=True)
        await ivy.room.local_participant.send_text(
            text, topic=TOPIC_TRANSCRIPTION, attributes=attrs
        )

    async def spoofed_prompt() -> tuple[bool, bool, str]:
        before = _rejections(a, TOPIC_TRANSCRIPTION, "ivy", "spoofed_caption")
        sessions = set(a.runtime.sessions.sessions)
        await caption("Steward, draw a cat on the left.")
        await asyncio.sleep(1.0)
        refused = _rejections(a, TOPIC_TRANSCRIPTION, "ivy", "spoofed_caption") > before
        started = [
            s
            for sid, s in a.runtime.sessions.sessions.items()
            if sid not in sessions and s.prompt.requester == a.ann.identity
        ]
        return refused, bool(started), f"sessions_as_ann={len(started)}"

    async def spoofed_stop() -> tuple[bool, bool, str]:
        reply = await a.ann.prompt(PROMPT)
        sid = reply.session_id or ""
        before = _rejections(a, TOPIC_TRANSCRIPTION, "ivy", "spoofed_caption")
        await caption("Steward, stop.")
        status = await a.ann.wait_status(sid) if sid else "not started"
        refused = _rejections(a, TOPIC_TRANSCRIPTION, "ivy", "spoofed_caption") > before
        return refused, status == "canceled", f"ann_run={status}"

    try:
        await a.attempt("caption_spoofed_prompt", spoofed_prompt)
        await a.attempt("caption_spoofed_stop", spoofed_stop)
    finally:
        await a.ann.room.local_participant.unpublish_track(track)


async def relay_attacks(a: Abuse) -> None:
    vic = await a.client("vic", can_prompt=False)
    for name, record in POISONED.items():

        async def poisoned(record: dict[str, Any] = record) -> tuple[bool, bool, str]:
            before = _rejections(a, TOPIC_EDIT, "vic")
            await vic.edit([record])
            await asyncio.sleep(0.5)
            refused = _rejections(a, TOPIC_EDIT, "vic") > before
            sid = str(record["id"]).removeprefix("shape:")
            reached = sid in a.runtime.mirror or sid in a.ann.shapes
            return refused, reached, f"reached_canvas={reached}"

        await a.attempt(name, poisoned)


async def owner_attack(a: Abuse, base: str, auth: dict[str, str]) -> None:
    """A participant named `http` cancels a run the HTTP API started."""
    named = await a.client("http")

    async def cancel_http_run() -> tuple[bool, bool, str]:
        body = {"roomId": a.room, "message": PROMPT}
        async with (
            aiohttp.ClientSession() as http,
            http.post(base + RUN_PATH, json=body, headers=auth) as r,
        ):
            sid = str((await r.json()).get("sessionId", ""))
        got = await named.cancel(sid)
        if sid:
            await a.ann.wait_status(sid)
        refused = not got.ok and "only who asked" in (got.error or "")
        return refused, got.ok, got.error or "ok"

    await a.attempt("cancel_http_run_as_participant_http", cancel_http_run)


def _series(metrics_text: str) -> int:
    """Series of the counter HTTP refusals go to (the rest of /metrics moves on its own)."""
    return sum(1 for line in metrics_text.splitlines() if line.startswith(f"{_REJECTIONS}{{"))


async def http_input_attacks(a: Abuse) -> None:
    service = a.stack.service
    key = service.settings.steward_api_key
    assert key is not None
    base = f"http://127.0.0.1:{service.http_port}"
    auth = {"Authorization": f"Bearer {key.get_secret_value()}"}
    await owner_attack(a, base, auth)

    async def label_growth() -> tuple[bool, bool, str]:
        async with aiohttp.ClientSession() as http:
            async with http.get(base + "/metrics") as r:
                before = await r.text()
            statuses = set()
            for _ in range(LABEL_PROBES):
                async with http.get(f"{base}{RUN_PATH}/{uuid.uuid4().hex}") as r:
                    statuses.add(r.status)
            async with http.get(base + "/metrics") as r:
                after = await r.text()
        grown = _series(after) - _series(before)
        added = len(after) - len(before)
        detail = f"statuses={sorted(statuses)} series_added={grown} bytes_added={added}"
        return statuses == {401}, grown > 2, detail

    async def nul_room() -> tuple[bool, bool, str]:
        body = b'{"roomId": "a\\u0000b", "message": "draw a cat"}'
        async with (
            aiohttp.ClientSession() as http,
            http.post(base + RUN_PATH, data=body, headers=auth) as r,
        ):
            return r.status == 400, r.status >= 500, f"{r.status} {(await r.text())[:100]}"

    async def huge_header() -> tuple[bool, bool, str]:
        headers = {"Authorization": "Bearer " + "k" * 100_000}
        async with (
            aiohttp.ClientSession() as http,
            http.get(base + "/api/rooms", headers=headers) as r,
        ):
            return 400 <= r.status < 500, r.status >= 500 or r.status < 400, str(r.status)

    await a.attempt("http_metric_label_growth", label_growth)
    await a.attempt("http_room_id_with_nul", nul_room)
    await a.attempt("http_100kb_authorization_header", huge_header)


async def input_attacks(a: Abuse) -> None:
    await caption_attacks(a)
    await relay_attacks(a)
    await http_input_attacks(a)
