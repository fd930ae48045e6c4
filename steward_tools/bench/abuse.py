"""`steward bench abuse --json`: every attack the steward is built to refuse, against a real
room, then the honest user's prompt.

One steward (real livekit-server, real Postgres, scripted model) serves a room where `ann`
(allowed to prompt, the host) works. Attackers then try, one attempt each: forged, expired,
ambiguous and re-set prompt grants; cancelling another's run; model and file picks, bad
bearer tokens and an oversized body over HTTP, and what `/healthz` tells; bogus acks (which
also get the sender muted); unsolicited text and byte streams (four of 5 MiB among them);
whole-room resync floods; spoofed captions, poisoned relayed records, a participant
named like the HTTP API's runs, caller-chosen metric labels and unstorable ids
(`steward_tools.bench.abuse_input`); 3 MiB streams and 60 kB packets on a topic the steward
has no handler for (`app:*`), a flood of refused prompts, and a peer that never acks but asks
for whole-room replays; a gzip bomb from a host in a second room, and in a third a host that
answers late but honestly one time in three. Optionally the live fuzzer of
`steward bench fuzz --live` runs after them.

Each attempt is *refused and logged* when the steward refused it and wrote a refusal log
line for it, or *accepted wrongly* when the attack got what it wanted. `crashes` counts
error-level lines and exceptions around our callbacks. `honest_latency_ratio` is ann's
prompt-to-done time after the attacks over her time before them (median of 3 each);
`honest_during_flood_ratio` her run started during the unread-topic floods over the same
median, and `flood_phases_s` where the flood's seconds went (each flooder's first byte counted,
first strike, mute and LiveKit's answer to it; the last packet dropped from a muted sender).
The steward's RSS growth (`rss_mb_growth`) is this process's: the floods are sent from
child processes (`steward_tools.rigs.flooder`), and the attackers whose clients still run
here connect before the baseline, so neither their connections nor the senders' buffers are
counted as the steward's; what their attacks make those clients hold still is
(`rss_mb_growth_method` puts the old, all-attackers-counted estimate beside it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import structlog

from steward.access import mint_token, prompt_grant
from steward.api.app import MAX_BODY_BYTES, RUN_PATH
from steward.protocol.names import (
    ATTR_CAN_PROMPT,
    RESYNC_ALL_SESSIONS,
    TOPIC_ACK,
    TOPIC_CONTEXT,
    TOPIC_RESYNC,
    TOPIC_SCREENSHOT,
    TOPIC_TRANSCRIPTION,
)
from steward.room.runtime import RoomRuntime
from steward_tools.bench.abuse_hostile import (
    PROMPT,
    honest_run,
    hostile_cases,
    hostile_summary,
    settled_rss_mb,
)
from steward_tools.bench.harness import Stack, start_api_stack
from steward_tools.headless.client import Faults, HeadlessClient
from steward_tools.process_usage import self_rss_mb
from steward_tools.rigs.flooder import Flooders, flood
from steward_tools.rigs.stream_sender import COMPRESSED_MIB, send_watching
from steward_tools.waiting import bounded, wait_until

# Log events that record a refusal (each names the participant or peer and a reason).
REFUSALS = frozenset(
    {
        "inbound_rejected",
        "prompt_refused",
        "http_rejected",
        "grant_rebound_refused",
        "session_cancel_refused",
        "model_refused",
        "participant_muted",
        "inbound_over_budget",
        "host_demoted",
        "context_source_avoided",
    }
)


@dataclass
class RefusalLog:
    """The steward's refusal log lines and anything at error level, during the run."""

    refusals: Counter[str] = field(default_factory=Counter)
    crashes: list[str] = field(default_factory=list)
    # When each (event, participant) was first logged (monotonic), for the flood's timeline.
    first_at: dict[tuple[str, str], float] = field(default_factory=dict)

    def tap(self, _logger: Any, _name: str, event: MutableMapping[str, Any]) -> Mapping[str, Any]:
        name = str(event.get("event", ""))
        self.first_at.setdefault((name, str(event.get("participant", ""))), time.monotonic())
        if name in REFUSALS:
            self.refusals[name] += 1
        if event.get("level") in ("error", "critical"):
            self.crashes.append(f"{name}: {str(event.get('error', ''))[:160]}")
        raise structlog.DropEvent

    def total(self) -> int:
        return sum(self.refusals.values())


@dataclass
class Result:
    """How one attack went: refused or not, logged or not, and any detail."""

    name: str
    refused: bool
    logged: bool
    accepted_wrongly: bool
    detail: str = ""


@dataclass
class Abuse:
    """The abuse bench's room: the stack, the honest user, the attackers, each attack's result."""

    stack: Stack
    runtime: RoomRuntime
    ann: HeadlessClient
    refusal_log: RefusalLog
    results: list[Result] = field(default_factory=list)
    clients: list[HeadlessClient] = field(default_factory=list)
    # Attackers connected before the baseline RSS (`connect_attackers`), taken by `client`.
    ready: dict[str, HeadlessClient] = field(default_factory=dict)

    @property
    def room(self) -> str:
        return self.runtime.room_id

    async def client(self, identity: str, room: str | None = None, **kw: Any) -> HeadlessClient:
        if room is None and identity in self.ready:  # connected with the same arguments
            return self.ready.pop(identity)
        s = self.stack.server
        c = HeadlessClient.create(
            s.url, s.api_key, s.api_secret, room=room or self.room, identity=identity, **kw
        )
        await c.connect()
        self.clients.append(c)
        runtime = self.stack.service.rooms[room or self.room]
        await wait_until(
            lambda: runtime.participants.get(identity) is not None,
            10,
            f"{identity} seen",
            every=0.02,
        )
        return c

    async def attempt(
        self, name: str, run: Callable[[], Awaitable[tuple[bool, bool, str]]]
    ) -> None:
        """`run` returns (refused, accepted_wrongly, detail); logged = a refusal line came."""
        before = self.refusal_log.total()
        try:
            refused, wrongly, detail = await run()
        except Exception as err:  # the attack itself broke: not a steward crash, but say so
            refused, wrongly, detail = False, False, f"attempt failed: {err!r}"[:200]
        await asyncio.sleep(0.2)  # the refusal's log line may follow the reply
        logged = self.refusal_log.total() > before
        self.results.append(Result(name, refused, logged, wrongly, detail))

    async def set_grant(self, c: HeadlessClient, value: str) -> None:
        await c.room.local_participant.set_attributes({ATTR_CAN_PROMPT: value})
        runtime = self.stack.service.rooms[c_room(c)]
        await wait_until(
            lambda: (
                (m := runtime.participants.get(c.identity)) is not None
                and m.attributes.get(ATTR_CAN_PROMPT) == value
            ),
            10,
            f"{c.identity}'s grant seen",
            every=0.02,
        )

    async def refused_prompt(self, c: HeadlessClient) -> tuple[bool, bool, str]:
        reply = await c.prompt(PROMPT)
        return reply.session_id is None, reply.session_id is not None, reply.error or ""


# The attackers of this room whose clients run in this process, by whether they may prompt:
# connected before the baseline RSS is taken (`connect_attackers`), because each connection
# is the rig's memory (its own rtc room in the native runtime), not the steward's. Those that
# must connect during their attack (bob, who reconnects; other rooms) are not among them.
IN_PROCESS_ATTACKERS = {
    "eve": False,
    "carl": True,
    "mallory": False,
    "trudy": False,
    "rex": False,
    "ivy": False,
    "vic": False,
    "http": True,
}


async def connect_attackers(a: Abuse) -> None:
    for who, can_prompt in IN_PROCESS_ATTACKERS.items():
        a.ready[who] = await a.client(who, can_prompt=can_prompt)


def c_room(c: HeadlessClient) -> str:
    return c.room.name


# --- the attacks ---------------------------------------------------------------------------
async def grant_attacks(a: Abuse) -> None:
    secret = a.stack.server.api_secret
    exp = int(time.time()) + 600
    eve = await a.client("eve", can_prompt=False)

    async def forged() -> tuple[bool, bool, str]:
        await a.set_grant(eve, "true")
        return await a.refused_prompt(eve)

    async def expired() -> tuple[bool, bool, str]:
        old = prompt_grant(secret, room=a.room, identity="eve", expires_at=int(time.time()) - 5)
        await a.set_grant(eve, old)
        return await a.refused_prompt(eve)

    async def another_room() -> tuple[bool, bool, str]:
        await a.set_grant(
            eve, prompt_grant(secret, room="elsewhere", identity="eve", expires_at=exp)
        )
        return await a.refused_prompt(eve)

    async def ambiguous() -> tuple[bool, bool, str]:
        # Minted for (room minus ":x", "x:eve"): v1 joined the two with ':'.
        base = a.room[: -len(":x")]
        await a.set_grant(eve, prompt_grant(secret, room=base, identity="x:eve", expires_at=exp))
        return await a.refused_prompt(eve)

    async def reset_old() -> tuple[bool, bool, str]:
        bob = await a.client("bob")
        old = bob.room.local_participant.attributes[ATTR_CAN_PROMPT]
        first = await bob.prompt(PROMPT)
        if first.session_id:
            await bob.wait_status(first.session_id)
        await a.runtime.grants.flush()
        await bob.disconnect()
        a.clients.remove(bob)
        again = await a.client("bob", can_prompt=False)
        await a.set_grant(again, old)
        return await a.refused_prompt(again)

    await a.attempt("grant_forged", forged)
    await a.attempt("grant_expired", expired)
    await a.attempt("grant_other_room", another_room)
    await a.attempt("grant_ambiguous_encoding", ambiguous)
    await a.attempt("grant_reset_on_new_connection", reset_old)


async def cancel_attack(a: Abuse) -> None:
    carl = await a.client("carl")

    async def cancel_others() -> tuple[bool, bool, str]:
        reply = await a.ann.prompt(PROMPT)
        sid = reply.session_id or ""
        got = await carl.cancel(sid)
        if sid:
            await a.ann.wait_status(sid)
        return not got.ok, got.ok, got.error or ""

    await a.attempt("cancel_someone_elses_run", cancel_others)


async def http_attacks(a: Abuse) -> None:
    service = a.stack.service
    key = service.settings.steward_api_key
    assert key is not None
    base = f"http://127.0.0.1:{service.http_port}"
    auth = {"Authorization": f"Bearer {key.get_secret_value()}"}

    async def post(body: bytes, headers: dict[str, str]) -> tuple[int, str]:
        async with (
            aiohttp.ClientSession() as http,
            http.post(base + RUN_PATH, data=body, headers=headers) as r,
        ):
            return r.status, await r.text()

    def body(**extra: Any) -> bytes:
        return json.dumps({"roomId": a.room, "message": PROMPT, **extra}).encode()

    async def replay_file() -> tuple[bool, bool, str]:
        status, text = await post(body(model="replay:/etc/hostname"), auth)
        return status == 400, status == 202, text[:120]

    async def costly_model() -> tuple[bool, bool, str]:
        status, text = await post(body(model="anthropic:claude-opus-4"), auth)
        return status == 400, status == 202, text[:120]

    async def non_ascii_bearer() -> tuple[bool, bool, str]:
        status, text = await post(body(), {"Authorization": "Bearer \u043a\u043b\u044e\u0447"})
        return status == 401, status < 300 or status >= 500, text[:120]

    async def oversize_body() -> tuple[bool, bool, str]:
        raw = body()
        status, text = await post(raw + b" " * (MAX_BODY_BYTES + 1 - len(raw)), auth)
        return status == 413, status != 413, text[:120]

    async def rooms_without_key() -> tuple[bool, bool, str]:
        async with aiohttp.ClientSession() as http, http.get(base + "/api/rooms") as r:
            return r.status == 401, r.status == 200, str(r.status)

    await a.attempt("http_replay_file_model", replay_file)
    await a.attempt("http_unlisted_model", costly_model)
    await a.attempt("http_non_ascii_bearer", non_ascii_bearer)
    await a.attempt("http_body_over_limit", oversize_body)
    await a.attempt("http_rooms_without_key", rooms_without_key)
    async with aiohttp.ClientSession() as http, http.get(base + "/healthz") as r:
        health = await r.json()
    # Not a refusal: what anyone can read must be live/ready only.
    a.results.append(
        Result("healthz_tells_nothing", True, True, set(health) != {"live", "ready"}, str(health))
    )


async def storage_attacks(a: Abuse, pool: Any, big: Flooders, out: dict[str, Any]) -> None:
    mallory = await a.client("mallory", can_prompt=False)

    async def bogus_acks() -> tuple[bool, bool, str]:
        for i in range(300):
            ack = {"sessionId": f"s-never-{i}", "seq": 1 + i, "applied": [], "appliedAt": 1.0}
            await mallory.send_raw(json.dumps(ack).encode(), TOPIC_ACK)
        await asyncio.sleep(1.0)
        await a.runtime.broadcaster.flush_acks()
        written = await pool.fetchval(
            "SELECT count(*) FROM acks WHERE participant = $1 AND session_id LIKE 's-never-%'",
            "mallory",
        )
        muted = "mallory" in a.runtime.abuse.muted
        return written == 0, written > 0, f"written={written} muted={muted}"

    await a.attempt("acks_for_unsent_envelopes", bogus_acks)
    trudy = await a.client("trudy", can_prompt=False)
    lp = trudy.room.local_participant
    to = [a.stack.settings.steward_identity]

    def refusals_of(who: str) -> int:
        return sum(1 for _, w, r in a.runtime.rejected if w == who and r == "unexpected_stream")

    def refused_or_muted(who: str, before: int) -> Callable[[], bool]:
        """A refusal more, or the sender muted (its next streams are dropped unread)."""
        return lambda: refusals_of(who) > before or who in a.runtime.abuse.muted

    for topic in (TOPIC_SCREENSHOT, TOPIC_CONTEXT):

        async def text_stream(topic: str = topic) -> tuple[bool, bool, str]:
            before = refusals_of("trudy")
            await lp.send_text("x" * 5_000, topic=topic, destination_identities=to)
            await wait_until(refused_or_muted("trudy", before), 10, "trudy refused", every=0.02)
            return True, False, topic

        await a.attempt(f"unsolicited_text_stream_{topic}", text_stream)
    for topic in (TOPIC_ACK, TOPIC_TRANSCRIPTION):

        async def byte_stream(topic: str = topic) -> tuple[bool, bool, str]:
            before = refusals_of("trudy")
            await lp.send_bytes(b"\0" * 5_000, topic=topic, destination_identities=to)
            await wait_until(refused_or_muted("trudy", before), 10, "trudy refused", every=0.02)
            return True, False, topic

        await a.attempt(f"unsolicited_byte_stream_{topic}", byte_stream)

    async def big_streams() -> tuple[bool, bool, str]:
        before = refusals_of("oscar")
        await big.go()
        sent = await big.result(60)
        out["big_rss_mb_growth"] = sent.get("rss_mb_growth")
        # Each refused, or the sender muted at the first one's header (the rest dropped).
        await wait_until(
            lambda: refusals_of("oscar") >= before + 4 or "oscar" in a.runtime.abuse.muted,
            30,
            "oscar's streams refused",
            every=0.02,
        )
        refused = refusals_of("oscar") - before
        return True, False, f"4 x 5 MiB on agent:context, refused={refused} sent={sent['sent']}"

    await a.attempt("unsolicited_5mib_streams", big_streams)
    rex = await a.client("rex", can_prompt=False)

    async def resync_flood() -> tuple[bool, bool, str]:
        for _ in range(20):
            await rex.send_raw(json.dumps({"sessionId": "*", "lastSeq": 0}).encode(), TOPIC_RESYNC)
        await asyncio.sleep(1.0)
        # Rate limited, or withheld until rex acks the replay it was sent.
        limited = sum(
            1
            for t, w, r in a.runtime.rejected
            if (t, w) == (TOPIC_RESYNC, "rex") and r in ("rate_limited", "unacked_resync")
        )
        return limited >= 15, limited < 15, f"rate_limited={limited}/20"

    await a.attempt("whole_room_resync_flood", resync_flood)


@dataclass
class _Arrivals:
    """Seconds after the flood's start: each flooder's first data counted against its budget,
    and the last packet from a muted sender (what LiveKit still forwarded once told)."""

    first: dict[str, float] = field(default_factory=dict)
    last_dropped: float | None = None


async def _watch_arrivals(runtime: RoomRuntime, started: float, for_s: float) -> _Arrivals:
    out = _Arrivals()
    seen = runtime.inbound.dropped_from_muted
    while time.monotonic() - started < for_s:
        await asyncio.sleep(0.02)
        now = round(time.monotonic() - started, 3)
        for who, *_ in FLOODS:
            if who not in out.first and runtime.budget.usage(who)[1] > 0:
                out.first[who] = now
        if runtime.inbound.dropped_from_muted != seen:
            seen, out.last_dropped = runtime.inbound.dropped_from_muted, now
    return out


def _flood_timeline(log: RefusalLog, started: float, seen: _Arrivals) -> dict[str, Any]:
    """Each flooder's way from the flood's start to its mute, in seconds after the start:
    its first data counted, its first strike for data over its budget, `participant_muted`,
    LiveKit's answer to the revoke; and when the last packet from a muted sender arrived (all
    flooders together)."""

    def at(event: str, who: str) -> float | None:
        t = log.first_at.get((event, who))
        return None if t is None or t < started else round(t - started, 3)

    out: dict[str, Any] = {
        who: {
            "first_counted": seen.first.get(who),
            "first_over_budget": at("inbound_over_budget", who),
            "muted": at("participant_muted", who),
            "revoke_returned": at("participant_mute_applied", who),
        }
        for who, *_ in FLOODS
    }
    out["last_dropped_from_muted"] = seen.last_dropped
    return out


def _muted(c: HeadlessClient) -> bool:
    return c.room.local_participant.permissions.can_publish_data is False


# Floods (identity, topic, count, size, stream or packets) sent from a child process
# (`steward_tools.rigs.flooder`), so neither the senders' SDK buffers nor their CPU are
# counted as the steward's: four 5 MiB streams on a topic the steward reads when asked, and
# the unread-topic floods.
BIG_STREAMS = (("oscar", TOPIC_CONTEXT, 4, 5 << 20, True),)
FLOODS = (
    ("uma", "app:files", 22, 3 << 20, True),
    ("ugo", "app:cursor", 2000, 60_000, False),
)
Flood = tuple[str, str, int, int, bool]


async def start_flooders(a: Abuse, floods: tuple[Flood, ...]) -> Flooders:
    s = a.stack.server
    specs = [
        flood(
            s.api_key,
            s.api_secret,
            room=a.room,
            identity=who,
            topic=topic,
            count=count,
            size=size,
            stream=stream,
        )
        for who, topic, count, size, stream in floods
    ]
    flooders = await Flooders.start(s.url, a.stack.settings.steward_identity, specs)
    await wait_until(
        lambda: all(a.runtime.participants.get(f[0]) for f in floods),
        20,
        "the flooders seen",
        every=0.02,
    )
    return flooders


async def flow_attackers(a: Abuse) -> dict[str, HeadlessClient]:
    """The flow attacks' participants, connected before the baseline RSS is taken: each is an
    rtc connection in this process, a cost of the rig, not of the steward under attack."""
    clients = {"pam": await a.client("pam", can_prompt=False)}
    clients["nick"] = await a.client("nick", faults=Faults(never_ack=True))
    room = a.room + "-host"
    await a.stack.service.join(room)
    faults = Faults(context_mode="hang", honest_every=3)
    clients["hostile"] = await a.client("hostile", room=room, faults=faults)
    clients["alice"] = await a.client("alice", room=room)
    clients["bob"] = await a.client("bob", room=room, capabilities=("apply",))
    return clients


async def flow_attacks(
    a: Abuse, clients: dict[str, HeadlessClient], flooders: Flooders, during: dict[str, Any]
) -> None:
    """Traffic the steward never reads (with ann's run during it, into `during`), refused
    prompts and a peer that never acks."""

    async def unread_topic_floods() -> tuple[bool, bool, str]:
        async def all_muted() -> float:
            await wait_until(
                lambda: {f[0] for f in FLOODS} <= a.runtime.abuse.muted,
                30,
                "the flooders muted",
                every=0.02,
            )
            return round(time.monotonic() - started, 2)

        started = time.monotonic()
        await flooders.go()
        muted = asyncio.create_task(all_muted())
        drops = asyncio.create_task(_watch_arrivals(a.runtime, started, 15.0))
        await asyncio.sleep(0.2)  # the first streams' headers are in flight
        during["honest_run_s"] = await honest_run(a.ann)
        during["muted_after_s"] = await muted
        sent = await flooders.result()
        during["flooder_rss_mb_growth"] = sent.get("rss_mb_growth")
        during["phases_s"] = _flood_timeline(a.refusal_log, started, await drops)
        return True, False, f"sent_before_mute={sent.get('sent')}"

    await a.attempt("unread_topic_floods", unread_topic_floods)
    pam = clients["pam"]

    async def prompt_flood() -> tuple[bool, bool, str]:
        refused = granted = 0
        for _ in range(400):
            if _muted(pam):
                break
            try:
                async with asyncio.timeout(2):
                    reply = await pam.prompt(PROMPT)
            except Exception:
                continue
            granted += reply.session_id is not None
            refused += reply.session_id is None
        await wait_until(lambda: "pam" in a.runtime.abuse.muted, 10, "pam muted", every=0.02)
        lines = a.refusal_log.refusals["prompt_refused"]
        return granted == 0, granted > 0 or refused > 60, f"refused={refused} log_lines={lines}"

    await a.attempt("refused_prompt_flood", prompt_flood)
    nick = clients["nick"]

    async def never_acker() -> tuple[bool, bool, str]:
        rt = a.runtime
        first = await honest_run(a.ann)
        await wait_until(
            lambda: rt.broadcaster.gate.owes_ack("nick"), 15, "nick owing an ack", every=0.02
        )
        dups = nick.stats.duplicates_received
        reply = await a.ann.prompt(PROMPT)
        if reply.session_id:
            await a.ann.wait_status(reply.session_id)
        for _ in range(4):
            payload = {"sessionId": RESYNC_ALL_SESSIONS, "lastSeq": 0}
            await nick.send_raw(json.dumps(payload).encode(), TOPIC_RESYNC)
        await asyncio.sleep(2.0)  # several retransmit timeouts
        withheld = sum(1 for t, w, r in rt.rejected if (w, r) == ("nick", "unacked_resync"))
        retransmits = nick.stats.duplicates_received - dups  # envelopes it got twice
        detail = f"withheld={withheld} retransmits_after={retransmits} first_run_s={first}"
        return withheld >= 4, withheld < 4 or retransmits > 0, detail

    await a.attempt("never_acking_peer_resyncs", never_acker)


async def hostile_host_attack(a: Abuse, clients: dict[str, HeadlessClient]) -> list[float | None]:
    """A room whose host answers `steward.context` never in time, honestly one time in three:
    bob's runs must not wait on her twice, and she must lose the host role."""
    runtime = a.stack.service.rooms[a.room + "-host"]
    hostile, bob = clients["hostile"], clients["bob"]
    took: list[float | None] = []

    async def late_host() -> tuple[bool, bool, str]:
        asked = []
        for _ in range(5):
            before = hostile.stats.context_requests
            took.append(await honest_run(bob, timeout=30))
            asked.append(hostile.stats.context_requests - before)
        demoted = runtime.participants.host != "hostile"
        slow = any(t is None or t > 15.0 for t in took)
        runs = [None if t is None else round(t, 2) for t in took]
        detail = f"asked={asked} run_s={runs} host={runtime.participants.host}"
        return demoted, not demoted or slow, detail

    await a.attempt("late_host_one_in_three_honest", late_host)
    return took


async def compressed_stream_attack(a: Abuse) -> float:
    """256 MiB of zeros, SDK-compressed, unasked on agent:context from a participant with no
    rights, sent from another process; returns the steward's peak RSS growth in MB."""
    s = a.stack.server
    token = mint_token(
        s.api_key, s.api_secret, room=a.room, identity="zed", capabilities=(), can_prompt=False
    )
    to = a.stack.settings.steward_identity
    growth = [0.0]

    async def zeros() -> tuple[bool, bool, str]:
        before = sum(1 for _, w, r in a.runtime.rejected if w == "zed")
        out, growth[0] = await send_watching(s.url, token, to, TOPIC_CONTEXT, "self")
        refused = sum(1 for _, w, r in a.runtime.rejected if w == "zed") > before
        return refused, False, f"{out} peak_rss_growth_mb={growth[0]:.1f}"

    await a.attempt(f"compressed_{COMPRESSED_MIB}mib_zero_stream", zeros)
    return growth[0]


async def bomb_attack(a: Abuse, baseline_s: float | None) -> float | None:
    """A second room whose host answers context with a gzip bomb: the run must not stall
    (wrongly accepted: over twice the honest run's time and over 15 s, where it once stalled
    25 s; the machine is shared, so an honest run's time alone is too noisy a bound)."""
    room = a.room + "-bomb"
    runtime = await a.stack.service.join(room)
    bomber = await a.client("bomber", room=room, faults=Faults(context_mode="gzip_bomb"))
    took: list[float | None] = []

    async def bomb() -> tuple[bool, bool, str]:
        took.append(await honest_run(bomber, timeout=30))
        oversize = sum(
            1 for t, w, r in runtime.rejected if (t, w, r) == (TOPIC_CONTEXT, "bomber", "oversize")
        )
        limit = max(2 * (baseline_s or 2.5), 15.0)
        slow = took[-1] is None or took[-1] > limit
        return oversize > 0, slow, f"run_s={took[-1]} oversize={oversize}"

    await a.attempt("context_gzip_bomb", bomb)
    return took[-1] if took else None


# --- the run ---------------------------------------------------------------------------------
async def abuse_bench(stack: Stack, *, fuzz_per_path: int) -> dict[str, Any]:
    refusal_log = RefusalLog()
    flood_run: dict[str, Any] = {}  # ann's run during the unread-topic floods, and the flooders'
    previous = structlog.get_config()
    structlog.configure(processors=[structlog.processors.add_log_level, refusal_log.tap])
    room = f"abuse-{uuid.uuid4().hex[:8]}:x"
    try:
        runtime = await stack.join(room)
        s = stack.server
        ann = HeadlessClient.create(s.url, s.api_key, s.api_secret, room=room, identity="ann")
        await ann.connect()
        await wait_until(
            lambda: runtime.participants.get("ann") is not None, 10, "ann seen", every=0.02
        )
        a = Abuse(stack, runtime, ann, refusal_log, clients=[ann])
        base_runs = [await honest_run(ann) for _ in range(3)]
        flow_clients = await flow_attackers(a)
        flooders = await start_flooders(a, FLOODS)
        big = await start_flooders(a, BIG_STREAMS)
        rss_clients = self_rss_mb(trim=True)
        await connect_attackers(a)
        rss_before, rss_before_untrimmed = self_rss_mb(trim=True), self_rss_mb()
        phases: dict[str, float] = {}  # RSS growth (MB, in use) of each group of attacks
        last = rss_before

        def phase(name: str) -> None:
            nonlocal last
            now = self_rss_mb(trim=True)
            phases[name], last = round(now - last, 1), now

        await grant_attacks(a)
        await cancel_attack(a)
        phase("grants_cancel")
        await http_attacks(a)
        assert stack.service.db is not None
        try:
            await storage_attacks(a, stack.service.db.pool, big, flood_run)
        finally:
            await big.close()
        phase("http_storage")
        rss_flow = self_rss_mb()
        try:
            await flow_attacks(a, flow_clients, flooders, flood_run)
        finally:
            await flooders.close()
        rss_flow = self_rss_mb() - rss_flow
        phase("flow")
        compressed_growth = await compressed_stream_attack(a)
        phase("compressed_stream")
        from steward_tools.bench.abuse_input import input_attacks

        await input_attacks(a)
        phase("input")
        ok_base = [t for t in base_runs if t is not None]
        bomb_s = await bomb_attack(a, statistics.median(ok_base) if ok_base else None)
        phase("gzip_bomb")
        host_runs = await hostile_host_attack(a, flow_clients)
        phase("late_host")
        after_runs = [await honest_run(ann) for _ in range(3)]
        # Before anyone leaves: the steward forgets a participant's strikes and mute on leaving.
        muted = sorted(runtime.abuse.muted)
        # The flooders run in this process: what their SDK still holds of the floods is theirs,
        # not the steward's, so they leave before the steward's memory is measured.
        for c in flow_clients.values():
            await c.disconnect()
        await asyncio.sleep(1.0)
        rss_before_fuzz = self_rss_mb()
        rss_growth_untrimmed = rss_before_fuzz - rss_before_untrimmed
        rss_growth = self_rss_mb(trim=True) - rss_before
        fuzz: dict[str, Any] | None = None
        if fuzz_per_path > 0:
            from steward_tools.bench.fuzz_live import fuzz_live

            structlog.configure(**previous)
            fuzz = await fuzz_live(
                stack.service, stack.server, per_path=fuzz_per_path, seed=1, limit_s=60
            )
        for c in a.clients:
            if c not in flow_clients.values():
                await c.disconnect()
    finally:
        structlog.configure(**previous)
    ok_after = [t for t in after_runs if t is not None]
    during = flood_run.get("honest_run_s")
    moved = {  # the flooder processes' own growth
        "flood_process": float(flood_run.get("flooder_rss_mb_growth") or 0.0),
        "big_stream_process": float(flood_run.get("big_rss_mb_growth") or 0.0),
    }
    base_med = statistics.median(ok_base) if ok_base else None
    after_med = statistics.median(ok_after) if ok_after else None
    results = a.results
    fuzz_crashes = int(fuzz.get("crashes", 0)) if fuzz else 0
    return {
        "attempts": len(results),
        "refused_and_logged": sum(1 for r in results if r.refused and r.logged),
        "accepted_wrongly": sum(1 for r in results if r.accepted_wrongly),
        "not_logged": [r.name for r in results if r.refused and not r.logged],
        "crashes": len(refusal_log.crashes) + fuzz_crashes,
        # In use (after gc and malloc_trim) by this process: the steward, ann and the attackers
        # that still run here; the unread-topic flooders run in their own process.
        "rss_mb_growth": round(rss_growth, 1),
        "rss_mb_growth_untrimmed": round(rss_growth_untrimmed, 1),
        "rss_mb_growth_by_phase": phases,
        "rss_mb_before_fuzz": round(rss_before_fuzz, 1),
        # Of which during the unread-topic floods, prompt flood and never-acker.
        "rss_mb_growth_flow_attacks": round(rss_flow, 1),
        # The two ways of measuring side by side. Before, the flooders ran in this process and
        # the other attackers connected during their attacks, so their memory was counted as
        # the steward's growth; the old figure is estimated here as the new one plus what was
        # moved out of it (each part measured in this run).
        "rss_mb_growth_method": {
            "old_all_attackers_counted_estimate": round(
                rss_growth + (rss_before - rss_clients) + sum(moved.values()), 1
            ),
            "new_attackers_connected_before_and_floods_in_child": round(rss_growth, 1),
            "moved_out_mb": {"attacker_clients": round(rss_before - rss_clients, 1), **moved},
        },
        "honest_prompt_ok": len(ok_after) == len(after_runs) and len(ok_base) == len(base_runs),
        "honest_latency_s": {"before": base_med, "after": after_med, "during_flood": during},
        "honest_latency_ratio": round(after_med / base_med, 2) if base_med and after_med else None,
        # ann's run started 0.2 s into the unread-topic floods, over her median before them.
        "honest_during_flood_ratio": round(during / base_med, 2) if base_med and during else None,
        "flood_muted_after_s": flood_run.get("muted_after_s"),
        "flood_phases_s": flood_run.get("phases_s"),
        "compressed_stream_rss_mb": round(compressed_growth, 1),
        "gzip_bomb_run_s": None if bomb_s is None else round(bomb_s, 2),
        "late_host_runs_s": [None if t is None else round(t, 2) for t in host_runs],
        "targets": {
            "honest_latency_ratio": 1.5,
            "honest_during_flood_ratio": 1.5,
            "rss_mb_growth": 32,
        },
        "muted": muted,
        "results": [r.__dict__ for r in results],
        **({"live_fuzz": fuzz} if fuzz is not None else {}),
        **({"crash_examples": refusal_log.crashes[:5]} if refusal_log.crashes else {}),
    }


async def run_bench(fuzz_per_path: int = 10, *, only_hostile: bool = False) -> dict[str, Any]:
    """The hostile cases first (`abuse_hostile`: the steward's memory is measured from a fresh
    start), then, unless `only_hostile`, every other attack."""
    stack = await start_api_stack("abuse", tokens_per_s=400.0)
    try:
        hostile = await bounded(hostile_cases(stack), 300, "abuse bench, hostile cases")
        if only_hostile:
            return {"hostile": hostile, **hostile_summary(hostile)}
        result: dict[str, Any] = await bounded(
            abuse_bench(stack, fuzz_per_path=fuzz_per_path), 600, "abuse bench"
        )
        # Every attacker of the whole suite gone (and ann): the steward's memory, untrimmed.
        whole = {
            "before": hostile["rss_mb"]["before"],
            "before_fuzz": result["rss_mb_before_fuzz"],
            "after": await settled_rss_mb(),
        }
        whole["after_over_before"] = round(whole["after"] - whole["before"], 1)
        return {**result, "hostile": hostile, **hostile_summary(hostile), "rss_mb_suite": whole}
    finally:
        await stack.close()


def _handler(args: argparse.Namespace) -> int:
    result = asyncio.run(
        run_bench(fuzz_per_path=args.fuzz_per_path, only_hostile=args.only_hostile)
    )
    print(json.dumps(result, indent=None if args.json else 2, default=str))
    if args.only_hostile:
        return 0
    # Timed targets are reported (`misses`), not failed on: the machine's load moves them.
    ok = result["accepted_wrongly"] == 0 and result["crashes"] == 0 and result["honest_prompt_ok"]
    return 0 if ok else 1


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "abuse", help="every refused attack on a real room (run in ./ops/netns-run.sh)"
    )
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--fuzz-per-path", type=int, default=10, help="then the live fuzzer (0: skip it)"
    )
    p.add_argument(
        "--only-hostile",
        action="store_true",
        help="only the many-topic flood, the hostile host and the memory after them",
    )
    p.set_defaults(handler=_handler)
