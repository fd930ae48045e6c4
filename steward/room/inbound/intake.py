"""Prompt intake: RPC `steward.prompt` and `steward.cancel`, and voice transcriptions.

Only participants whose token carries a valid signed grant in `steward.can_prompt` (see
`steward.access`, bound to their session by `steward.room.inbound.grants`), or everyone under the
`everyone` policy, may prompt; each is rate limited. A refused prompt is a strike (past
`REFUSED_PER_MIN` a minute, ten), its log line sampled (`SampledLog`). A run is cancelled by
who asked for it or a moderator (a `pm` grant), or by anyone allowed to prompt under the
cancel policy `everyone`. Final voice segments that address the steward by its wake phrase
become prompts of their speaker: the steward's own transcription (`steward.voice`) and
`lk.transcription` streams. A caption speaks for its sender, or, when it names another
participant's track in `lk.transcribed_track_id`, for that track's owner only if its sender
is an agent the deployment trusts (`STEWARD_CAPTION_AGENTS`, of LiveKit kind agent); any
other caption of someone else's track is refused unread and counted as a strike, so it can
neither prompt, nor cancel, nor stop the steward hearing the real speaker. "Steward, stop"
cancels the room's running sessions the speaker may cancel. "Undo" and "redo", typed or
spoken (`steward.room.inbound.undo_words`), take back or do again the asker's last run through
`on_command` (the room's `Reverter`) and never start a model run.
"""

from __future__ import annotations

import re
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

from livekit import rtc

from steward.access import Grant
from steward.obs import metrics
from steward.obs.logging import get_logger
from steward.obs.sampled_log import SampledLog
from steward.obs.stage_hooks import Stage, StageHooks
from steward.ports import PromptInput, PromptSource
from steward.protocol import ProtocolError, decode
from steward.protocol.limits import MAX_PROMPT_CHARS, MAX_RPC_PAYLOAD_BYTES
from steward.protocol.messages import CancelReply, CancelRequest, PromptReply, PromptRequest
from steward.protocol.names import RPC_CANCEL, RPC_PROMPT
from steward.room.inbound.undo_words import Command, command_of
from steward.room.owners import RESERVED_PREFIX, is_reserved
from steward.room.participants import Member, Participants
from steward.task_set import TaskSet

log = get_logger(__name__)

TRANSCRIPTION_FINAL_ATTR = "lk.transcription_final"
TRANSCRIBED_TRACK_ATTR = "lk.transcribed_track_id"
# What speech to text makes of "steward" (the default wake phrase) besides the word itself.
WAKE_ALIASES: dict[str, tuple[str, ...]] = {"steward": ("stewart", "stuart")}
_GREETINGS = ("", "hey", "ok", "okay", "hi", "hello")
# Requests that cancel instead of prompting ("steward, stop").
STOP_WORDS = frozenset(
    {"stop", "stop that", "stop it", "stop now", "cancel", "cancel that", "cancel it"}
)
# A bare "steward" arms the speaker: their next segment within this window is the request.
WAKE_ARMED_S = 6.0
# The same words from the same speaker this soon again are one utterance heard twice.
VOICE_DUPLICATE_S = 5.0
# Refused `steward.prompt` calls per participant a minute; past it each weighs more strikes.
REFUSED_PER_MIN = 10
REFUSAL_PAST_LIMIT_STRIKES = 10
REFUSED_RATE_LIMIT = "rate limit: too many refused prompts, try again in a minute"


class RateLimiter:
    """A sliding one-minute window per participant. Participants with no hit in the last
    minute are dropped now and then (not on leaving: a rejoin must not reset the window), so
    identities that come and go cannot grow it without bound."""

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self._clock = clock
        self._hits: dict[str, deque[float]] = {}
        self._pruned_at = clock()

    def allow(self, key: str) -> bool:
        now = self._clock()
        if now - self._pruned_at > 60.0:
            self._pruned_at = now
            self._hits = {k: h for k, h in self._hits.items() if h and now - h[-1] <= 60.0}
        hits = self._hits.setdefault(key, deque())
        while hits and now - hits[0] > 60.0:
            hits.popleft()
        if len(hits) >= self.per_minute:
            return False
        hits.append(now)
        return True

    def __len__(self) -> int:
        """Participants remembered."""
        return len(self._hits)


def _normalized(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s']", " ", text.lower()).split())


def addressed_text(text: str, wake_phrase: str) -> str | None:
    """The request in a transcript that addresses the steward, or None.

    "Steward, draw a cat" → "draw a cat"; "hey stewart draw a cat" → "draw a cat";
    "please ask the steward to draw a cat" → the whole sentence; "steward" alone → "".
    """
    phrase = wake_phrase.strip()
    if not phrase:
        return None
    names = (phrase, *WAKE_ALIASES.get(phrase.lower(), ()))
    pattern = "|".join(re.escape(name) for name in names)
    m = re.search(rf"\b(?:{pattern})\b", text, flags=re.IGNORECASE)
    if m is None:
        return None
    head = text[: m.start()].strip(" ,.!?").lower()
    rest = text[m.end() :].strip(" ,.:;!?")
    if head in _GREETINGS:
        return rest
    return text.strip()


def trusted_agents(room: rtc.Room, identities: frozenset[str]) -> Callable[[str], bool]:
    """Whether a sender may caption others: one of `identities`, joined as LiveKit kind agent
    (a token the deployment minted for its voice agent, not a browser's)."""

    def trusted(identity: str) -> bool:
        p = room.remote_participants.get(identity) if identity in identities else None
        return p is not None and p.kind == rtc.ParticipantKind.PARTICIPANT_KIND_AGENT

    return trusted


@dataclass
class IntakeDecision:
    """Whether a prompt may start, and why not."""

    allowed: bool
    reason: str = ""


Start = Callable[[PromptInput], Awaitable[str]]
# Where a typed prompt came from, as its refusals are logged: the RPC or LiveKit's chat.
PromptChannel = Literal["browser", "chat"]
Cancel = Callable[[str, str], bool]
# The participant (or API client) whose prompt started a session; None when no prompt did
# (a fairy's own sessions) or the session is unknown.
OwnerOf = Callable[[str], str | None]
OnCommand = Callable[[str, str, Command], Awaitable[PromptReply]]


class Intake:
    """Admits prompts (RPC, chat, voice) and cancels: grants, policy, rate and size limits, then
    starts the run."""

    def __init__(
        self,
        room_id: str,
        participants: Participants,
        start: Start,
        cancel: Cancel,
        *,
        policy: str = "attribute",
        rate_per_min: int = 30,
        wake_phrase: str = "steward",
        on_reject: Callable[[str, str, str, str], None] | None = None,
        verify_grant: Callable[[Member], Grant | None] = lambda _member: None,
        on_speaking: Callable[[str], object] | None = None,
        cancel_policy: str = "owner",
        owner_of: OwnerOf = lambda _session_id: None,
        running: Callable[[], list[str]] = list,
        track_owner: Callable[[str], str | None] = lambda _sid: None,
        trusted_captioner: Callable[[str], bool] = lambda _identity: False,
        on_transcribed_elsewhere: Callable[[str], None] | None = None,
        on_strike: Callable[[str, str, int], None] | None = None,
        refused_per_min: int = REFUSED_PER_MIN,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.room_id = room_id
        self._participants = participants
        self._start = start
        self.hooks = StageHooks()
        self._cancel = cancel
        self.policy = policy
        self.limiter = RateLimiter(rate_per_min)
        self.wake_phrase = wake_phrase
        self._on_reject = on_reject
        self._verify_grant = verify_grant
        self.cancel_policy = cancel_policy
        self._owner_of = owner_of
        # Called with the sender when a transcription stream starts (a prompt may follow).
        self.on_speaking = on_speaking
        # Session ids "steward, stop" cancels.
        self._running = running
        self._track_owner = track_owner
        # Whether a sender may caption other participants' tracks (a trusted voice agent).
        self._trusted_captioner = trusted_captioner
        # Told who another voice agent transcribes, so the steward stops hearing them.
        self.on_transcribed_elsewhere = on_transcribed_elsewhere
        self._clock = clock
        self._armed: dict[str, float] = {}
        self._recent_voice: dict[str, tuple[str, float]] = {}
        self._tasks = TaskSet("transcription_task_failed", room=room_id)
        # Refused prompts: each a strike (identity, reason, weight) for the abuse guard.
        self.on_strike = on_strike
        self._refused_limit = RateLimiter(refused_per_min, clock)
        self._refusals_log = SampledLog(log, clock=clock)
        # Told the speaker while someone who may prompt is heard addressing the steward.
        self.on_addressed: Callable[[str], None] | None = None
        # "undo" / "redo" of a participant allowed to prompt (caller, words, command).
        self.on_command: OnCommand | None = None

    def may_prompt(self, member: Member) -> bool:
        if is_reserved(member.identity):  # the name space of owners that are not people
            return False
        if self.policy == "everyone":
            return True
        return self._verify_grant(member) is not None

    def is_moderator(self, member: Member) -> bool:
        grant = self._verify_grant(member)
        return grant is not None and grant.moderator

    def may_cancel(self, member: Member, owner: str | None) -> bool:
        """Whether `member` (already allowed to prompt) may cancel a run started by `owner`."""
        if self.cancel_policy == "everyone" or owner is None or owner == member.identity:
            return True
        return self.is_moderator(member)

    def authorize(self, identity: str) -> IntakeDecision:
        member = self._participants.get(identity)
        if member is None:
            return IntakeDecision(False, "unknown participant")
        if is_reserved(identity):
            return IntakeDecision(False, f"identities starting {RESERVED_PREFIX!r} are reserved")
        if not self.may_prompt(member):
            return IntakeDecision(False, "not allowed to prompt in this room")
        if not self.limiter.allow(identity):
            return IntakeDecision(False, "rate limit: too many prompts, try again in a minute")
        return IntakeDecision(True)

    def _refuse(self, identity: str, reason: str, source: str) -> None:
        metrics.PROMPTS_REFUSED.labels(reason=reason.split(":")[0]).inc()
        # Sampled: a flood of refusals is a line with a count every few seconds.
        self._refusals_log.info(
            (identity, source, reason),
            "prompt_refused",
            room=self.room_id,
            participant=identity,
            source=source,
            reason=reason,
        )

    def _bad_input(self, topic: str, sender: str, err: ProtocolError) -> None:
        if self._on_reject is not None:
            self._on_reject(topic, sender, err.kind, err.reason)
        else:
            metrics.REJECTED_INBOUND.labels(topic=topic, reason=err.kind).inc()
            log.warning(
                "inbound_rejected",
                room=self.room_id,
                topic=topic,
                participant=sender,
                reason=err.kind,
                detail=str(err)[:300],
            )

    async def on_prompt_rpc(self, inv: rtc.RpcInvocationData) -> str:
        caller = inv.caller_identity
        req = decode(PromptRequest, inv.payload, topic=RPC_PROMPT, max_bytes=MAX_RPC_PAYLOAD_BYTES)
        if isinstance(req, ProtocolError):
            self._bad_input(RPC_PROMPT, caller, req)
            return PromptReply(error=f"invalid prompt: {req}").to_wire().decode()
        return (await self.submit(caller, req)).to_wire().decode()

    async def submit(
        self, caller: str, req: PromptRequest, channel: PromptChannel = "browser"
    ) -> PromptReply:
        """A typed prompt of participant `caller` (its identity as LiveKit names the sender),
        from the `steward.prompt` RPC or an `lk.chat` stream: the grant, the rate limit, the
        strikes of refusals, then the run."""
        decision = self.authorize(caller)
        if not decision.allowed:
            reason = decision.reason
            if not self._refused_limit.allow(caller):  # the strikes weigh more, the mute nears
                reason = REFUSED_RATE_LIMIT
            self._refuse(caller, reason, channel)
            if self.on_strike is not None:
                self.on_strike(
                    caller,
                    "prompt_refused",
                    REFUSAL_PAST_LIMIT_STRIKES if reason == REFUSED_RATE_LIMIT else 1,
                )
            return PromptReply(error=reason)
        command = command_of(req.message)
        if command is not None and self.on_command is not None:
            log.info("prompt_command", room=self.room_id, participant=caller, command=command)
            return await self.on_command(caller, req.message, command)
        member = self._participants.get(caller)
        source: PromptSource = (
            "voice" if member is not None and member.role == "voice" else "browser"
        )
        prompt = PromptInput(
            message=req.message,
            source=source,
            requester=caller,
            bounds=req.bounds,
            selection=tuple(req.selection or ()),
            fairy=req.fairy,
            fairies=tuple(req.fairies or ()),
            chat=channel == "chat",
        )
        try:
            session_id = await self.hooks.timed(Stage.PROMPT_STARTED, self._start(prompt))
        except Exception as err:
            log.exception("prompt_start_failed", room=self.room_id, participant=caller)
            return PromptReply(error=f"could not start: {type(err).__name__}")
        return PromptReply(session_id=session_id)

    def cancel_refusal(
        self,
        caller: str,
        session_id: str,
        owner: str | None,
        *,
        verb: str = "cancel",
        what: str = "run",
    ) -> str | None:
        """Why `caller` may not cancel (or revert, `verb`) run `session_id` of `owner` (or a
        project, `what`), with its log line; None when allowed. The one check cancel, revert
        and a project's abort and undo pass."""
        member = self._participants.get(caller)
        if member is None or not self.may_prompt(member):
            self._refuse(caller, f"not allowed to {verb}", verb)
            return f"not allowed to {verb}"
        if not self.may_cancel(member, owner):
            self._refuse(caller, f"not allowed to {verb} another participant's run", verb)
            log.info(
                f"session_{verb}_refused",
                room=self.room_id,
                session_id=session_id,
                by=caller,
                owner=owner,
            )
            return f"only who asked for this {what}, or a moderator, may {verb} it"
        return None

    async def on_cancel_rpc(self, inv: rtc.RpcInvocationData) -> str:
        caller = inv.caller_identity
        req = decode(CancelRequest, inv.payload, topic=RPC_CANCEL, max_bytes=MAX_RPC_PAYLOAD_BYTES)
        if isinstance(req, ProtocolError):
            self._bad_input(RPC_CANCEL, caller, req)
            return CancelReply(ok=False, error=f"invalid cancel: {req}").to_wire().decode()
        refusal = self.cancel_refusal(caller, req.session_id, self._owner_of(req.session_id))
        if refusal is not None:
            return CancelReply(ok=False, error=refusal).to_wire().decode()
        ok = self._cancel(req.session_id, caller)
        error = None if ok else "no running session with that id"
        return CancelReply(ok=ok, error=error).to_wire().decode()

    async def _read_transcript(self, reader: rtc.TextStreamReader, sender: str) -> str | None:
        """The whole text, or None (refused) once it grows past any prompt's size."""
        text = ""
        async for chunk in reader:
            text += chunk
            if len(text) > MAX_PROMPT_CHARS * 2:
                err = ProtocolError(
                    kind="oversize", topic="lk.transcription", size=len(text), reason="too long"
                )
                self._bad_input("lk.transcription", sender, err)
                # An abandoned reader stays subscribed to every SDK event until closed.
                reader.close()
                return None
        return text

    def caption_speaker(self, sender: str, track: str | None) -> str | None:
        """Whose words a caption from `sender` naming `track` are; None: refused (logged and
        a strike when it claims someone else's track)."""
        if not track:
            return sender
        owner = self._track_owner(track)
        if owner == sender:
            return sender
        trusted = self._trusted_captioner(sender)
        if owner is not None and trusted:
            return owner
        if trusted:  # the track went away while the agent captioned it: nobody to hear
            log.info("caption_track_gone", room=self.room_id, participant=sender)
            return None
        reason = f"captions track {track[:64]!r} of {owner or 'nobody'}; sender is not trusted"
        err = ProtocolError(kind="spoofed_caption", topic="lk.transcription", size=0, reason=reason)
        self._bad_input("lk.transcription", sender, err)
        return None

    def on_transcription(self, reader: rtc.TextStreamReader, sender: str) -> None:
        track = (reader.info.attributes or {}).get(TRANSCRIBED_TRACK_ATTR)
        speaker = self.caption_speaker(sender, track)
        if speaker is None:
            reader.close()  # an abandoned reader stays subscribed to every SDK event
            return
        sender = speaker
        if self.on_transcribed_elsewhere is not None:
            self.on_transcribed_elsewhere(sender)
        if self.on_speaking is not None:
            try:
                self.on_speaking(sender)
            except Exception:  # a hint must never cost the prompt
                log.exception("speaking_hook_failed", room=self.room_id, participant=sender)
        self._tasks.spawn(self._transcription(reader, sender))

    def heard(self, speaker: str, text: str) -> None:
        """An unfinished segment of `speaker`: tells `on_addressed` when it addresses the
        steward (names it, or follows a bare wake phrase) and the speaker may prompt."""
        if self.on_addressed is None:
            return
        armed = self._clock() - self._armed.get(speaker, -WAKE_ARMED_S) < WAKE_ARMED_S
        if not armed and addressed_text(text, self.wake_phrase) is None:
            return
        member = self._participants.get(speaker)
        if member is not None and self.may_prompt(member):
            self.on_addressed(speaker)

    async def transcriptions_read(self) -> None:
        """Wait until the transcription streams handed over so far have been read."""
        await self._tasks.wait()

    async def _transcription(self, reader: rtc.TextStreamReader, sender: str) -> None:
        try:
            text = await self._read_transcript(reader, sender)
        except Exception as err:  # the sender aborted the stream, or the room went away
            failed = ProtocolError(
                kind="stream_failed", topic="lk.transcription", size=0, reason=str(err)
            )
            self._bad_input("lk.transcription", sender, failed)
            return
        attrs = reader.info.attributes or {}  # read after the end: it may carry them
        if text is None:
            return
        if attrs.get(TRANSCRIPTION_FINAL_ATTR) != "true":
            self.heard(sender, text)
            return
        await self.voice_final(sender, text)

    async def voice_final(self, speaker: str, text: str) -> str | None:
        """A final segment of `speaker`: a prompt (its session id), a stop, or nothing."""
        now = self._clock()
        words = _normalized(text)
        last = self._recent_voice.get(speaker)
        if last is not None and last[0] == words and now - last[1] < VOICE_DUPLICATE_S:
            return None  # heard twice (our STT and another agent's), run once
        self._recent_voice[speaker] = (words, now)
        message = addressed_text(text, self.wake_phrase)
        if message is None and now - self._armed.pop(speaker, -WAKE_ARMED_S) < WAKE_ARMED_S:
            message = text.strip()
        if message is None:
            return None
        if not _normalized(message):
            self._armed[speaker] = now  # "steward" alone: the request follows
            self.heard(speaker, text)
            return None
        member = self._participants.get(speaker)
        if _normalized(message) in STOP_WORDS:
            if member is None or not self.may_prompt(member):
                self._refuse(speaker, "not allowed to cancel", "voice")
                return None
            for session_id in self._running():
                if self.may_cancel(member, self._owner_of(session_id)):
                    self._cancel(session_id, speaker)
            return None
        decision = self.authorize(speaker)
        if not decision.allowed:
            self._refuse(speaker, decision.reason, "voice")
            return None
        command = command_of(message)
        if command is not None and self.on_command is not None:
            log.info("voice_command", room=self.room_id, participant=speaker, command=command)
            reply = await self.on_command(speaker, message, command)
            return reply.session_id
        prompt = PromptInput(message=message[:MAX_PROMPT_CHARS], source="voice", requester=speaker)
        try:
            session_id = await self.hooks.timed(Stage.PROMPT_STARTED, self._start(prompt))
        except Exception:
            log.exception("prompt_start_failed", room=self.room_id, participant=speaker)
            return None
        log.info("voice_prompt", room=self.room_id, participant=speaker, session_id=session_id)
        return session_id
