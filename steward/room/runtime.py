"""One code path once a room is connected: `RoomRuntime` wires the room's events to the
participants, inbound packets, broadcaster, relay, snapshot fetcher, intake and the
room's sessions (every run, prompted or a fairy's own).

Both entry points end here: `steward join ROOM` (direct connect, `room.connect`) and the
livekit-agents worker entrypoint (which hands over its already connected `rtc.Room`).
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable
from typing import Any

from livekit import rtc

from steward import ffi_router
from steward.canvas.mirror import CanvasMirror
from steward.obs import metrics
from steward.obs.logging import get_logger
from steward.ports import PromptInput
from steward.protocol.limits import MAX_DATA_PACKET_BYTES, MAX_ENVELOPE_BYTES
from steward.protocol.messages import (
    Ack,
    ActionEnvelope,
    CanvasEdit,
    ComposingHint,
    Resync,
    ViewportUpdate,
)
from steward.protocol.names import (
    ATTR_READY,
    RESYNC_ALL_SESSIONS,
    RPC_ABORT,
    RPC_CANCEL,
    RPC_CONVERSATION,
    RPC_DISMISS,
    RPC_PROMPT,
    RPC_RENAME,
    RPC_REVERT,
    RPC_REVERT_PROJECT,
    RPC_SUMMON,
    TOPIC_ACK,
    TOPIC_COMPOSING,
    TOPIC_EDIT,
    TOPIC_RESYNC,
    TOPIC_TRANSCRIPTION,
    TOPIC_VIEWPORT,
)
from steward.room.context.composing import ComposingHints
from steward.room.context.snapshot_fetcher import SnapshotFetcher
from steward.room.context.views import Views
from steward.room.departures import Departures
from steward.room.deps import RoomDeps
from steward.room.inbound.abuse import AbuseGuard, livekit_revoker
from steward.room.inbound.conversation_requests import ConversationRequests
from steward.room.inbound.crew import CrewChanges
from steward.room.inbound.grants import GrantBook
from steward.room.inbound.intake import Intake, trusted_agents
from steward.room.inbound.packets import InboundPackets
from steward.room.inbound.resync_requests import ResyncRequests
from steward.room.inbound.stream_inbox import StreamInbox, StreamMeter
from steward.room.inbound.user_edits import UserEdits
from steward.room.livekit_conventions import LiveKitConventions
from steward.room.outbound.broadcaster import Broadcaster
from steward.room.outbound.conversation import Conversation
from steward.room.outbound.envelopes import FragmentAssembler, is_fragment
from steward.room.outbound.messenger import Messenger
from steward.room.outbound.relay import Relay
from steward.room.outbound.standing import Standing
from steward.room.participants import Participants
from steward.room.runs.revert import RevertDeps, Reverter
from steward.room.runs.sessions import RoomSessions
from steward.room.runs.steering import Steering
from steward.task_set import TaskSet, close_within
from steward.voice.listener import Hearing, RoomVoice

log = get_logger(__name__)


def _joined_ms(p: rtc.Participant) -> int:
    joined = p.joined_at
    return int(joined.timestamp() * 1000) if joined is not None else int(time.time() * 1000)


class RoomRuntime:
    """One connected room: wires its events to the participants, inbound, context, outbound and
    runs."""

    def __init__(
        self, room: rtc.Room, room_id: str, deps: RoomDeps, *, fence: int | None = None
    ) -> None:
        s = deps.settings
        self.room = room
        self.room_id = room_id
        self.deps = deps
        self.mode = s.steward_apply_mode
        self.mirror = CanvasMirror()
        self.participants = Participants(
            on_left=self._on_left, on_joined=self._on_joined, on_host_changed=self._on_host_changed
        )
        self.abuse = AbuseGuard(
            room_id,
            livekit_revoker(
                s.livekit_url,
                s.livekit_api_key,
                s.livekit_api_secret.get_secret_value(),
                room_id,
            ),
            limit_per_min=s.steward_abuse_strikes_per_min,
            mute_s=s.steward_abuse_mute_seconds,
            on_muted=self._on_muted,
        )
        self._tasks = TaskSet("room_task_failed", room=room_id)
        self.inbound = InboundPackets(
            room_id,
            self.abuse,
            bytes_per_window=s.steward_inbound_budget_bytes,
            packets_per_window=s.steward_inbound_budget_packets,
            burst_bytes=s.steward_inbound_burst_bytes,
            unread_burst_bytes=s.steward_inbound_unread_burst_bytes,
            spawn=self._spawn,
            on_activity=self._active,
        )
        # Everything each participant sends, on any topic, read or not (inbound_budget).
        self.budget = self.inbound.budget
        reject = self.inbound.reject
        self.broadcaster = Broadcaster(
            room_id,
            self._publish_action,
            deps.outbox,
            self._recipients,
            retransmit_after_s=s.steward_retransmit_after_ms / 1000,
            retransmit_attempts=s.steward_retransmit_attempts,
            preview_interval_s=s.steward_preview_interval_ms / 1000,
            mirror=self.mirror,
            fence=fence,
        )
        # The room's one conversation, kept for tabs that reload or join late.
        self.conversation = Conversation(
            room_id, deps.conversation, keep=s.steward_conversation_items
        )
        self.conversation_requests = ConversationRequests(self.conversation, self.participants)
        self.messenger = Messenger(
            room_id,
            self._publish_all,
            partial_interval_s=s.steward_preview_interval_ms / 1000,
            conversation=self.conversation,
        )
        unread = functools.partial(self.budget.charge, unread=True)
        self.inbox = StreamInbox(reject, StreamMeter(self._is_muted, self.budget.charge, unread))
        self.departures = Departures(self)  # what goes when a participant leaves or is muted
        # Whose view a run sees: each participant's published viewport and own edits.
        self.views = Views()
        self.user_edits = UserEdits()
        self.snapshots = SnapshotFetcher(
            room_id,
            functools.partial(ffi_router.perform_rpc, room.local_participant),
            self.participants,
            self.inbox,
            self.mirror,
            lambda: self.broadcaster.room_order,
            timeout_s=s.steward_context_timeout_s,
            # Host mode: user edits bypass the steward, so only the short cache is safe.
            prefetch_ttl_s=s.steward_prefetch_ttl_s if self.mode == "relay" else None,
            max_size=s.steward_screenshot_max_size,
            max_bytes=s.steward_screenshot_max_bytes,
            on_reject=reject,
            adopt_shapes=self.mode == "host",
            views=self.views,
            edits=self.user_edits,
            browser_changes=self.mode == "host",
        )
        # Every run in the room: prompted, a fairy's own or a revert's.
        self.sessions = RoomSessions(
            room_id,
            deps.runner,
            broadcaster=self.broadcaster,
            messenger=self.messenger,
            snapshots=self.snapshots,
            outbox=deps.outbox,
            model=s.model_for_role("one-shot"),
            fairy_model=s.steward_model,
            max_s=s.steward_session_max_s,
            usage_of=deps.usage_of,
            fairies=deps.fairies,
        )
        self.grants = GrantBook(room_id, s.grant_keys(), deps.grant_bindings)
        self.intake = Intake(
            room_id,
            self.participants,
            self.sessions.start,
            self.sessions.cancel,
            policy=s.steward_prompt_policy,
            rate_per_min=s.steward_prompt_rate_per_min,
            wake_phrase=s.steward_wake_phrase,
            on_reject=reject,
            verify_grant=self.grants.check,
            cancel_policy=s.steward_cancel_policy,
            owner_of=self.sessions.owner,
            running=self.sessions.running,
            track_owner=self._track_owner,
            trusted_captioner=trusted_agents(room, s.caption_agents()),
            on_strike=self._strike,
        )
        # Set once the runs a dead steward left are ended (a revert's own run, started
        # before that, would be taken for one of them).
        self.interrupted_ended = asyncio.Event()
        self.reverter = Reverter(
            room_id,
            RevertDeps(
                self.broadcaster,
                self.messenger,
                deps.outbox,
                self.sessions,
                self.intake,
                startup=self.interrupted_ended,
            ),
        )
        self.intake.on_command = self.reverter.by_word
        self.crew = CrewChanges(
            room_id,
            self.participants,
            self.intake,
            deps.crew_store,
            deps.crew,
            policy=s.steward_crew_policy,
            limit=s.steward_crew_limit,
        )
        self.steering = Steering(
            room_id, self.intake, self.reverter, deps.project_runs, deps.projects
        )
        self.reverter.project_of_prompt = self.steering.revert_started_by
        # Fairy presence and each project's state, to everyone on change and to a tab that
        # joins.
        self.standing = Standing(self.messenger)
        self.voice: RoomVoice | None = None
        if deps.speech is not None:
            self.voice = RoomVoice(
                room,
                room_id,
                deps.speech,
                hearing=self._hearing,
                on_final=self._voice_final,
                may_speak=self._may_speak,
                on_interim=self.intake.heard,
            )
            self.intake.on_transcribed_elsewhere = self.voice.transcribed_elsewhere
        self.composing = ComposingHints(
            room_id,
            self.participants,
            self.snapshots,
            self.intake.may_prompt,
            reject,
            min_interval_s=s.steward_prefetch_min_interval_s,
        )
        self.intake.on_speaking = self.composing.on_voice
        self.relay = Relay(room_id, self.broadcaster, mode=self.mode)
        self.livekit = LiveKitConventions(
            room,
            room_id,
            intake=self.intake,
            messenger=self.messenger,
            meter=self.inbox.meter,
            on_reject=reject,
            may_speak=self._may_speak,
        )
        self.resyncs = ResyncRequests(
            self.broadcaster,
            may_apply=self._applies,
            shared_document=lambda: self.mode == "host",
            resend_interrupted=self.sessions.resend_interrupted,
            reject=reject,
        )
        self.inbound.handle(TOPIC_ACK, Ack, MAX_ENVELOPE_BYTES, self._on_ack)
        self.inbound.handle(TOPIC_RESYNC, Resync, MAX_ENVELOPE_BYTES, self._on_resync)
        self.inbound.handle(TOPIC_EDIT, CanvasEdit, MAX_DATA_PACKET_BYTES, self._on_edit)
        self.inbound.handle(TOPIC_VIEWPORT, ViewportUpdate, MAX_ENVELOPE_BYTES, self._on_viewport)
        self.inbound.handle(
            TOPIC_COMPOSING, ComposingHint, MAX_ENVELOPE_BYTES, self.composing.on_hint
        )
        self.closed = asyncio.Event()
        # Set while the lease gate refuses (`_may_speak`): nothing of ours reaches the room.
        self.silenced = False
        # Wall-clock time of the last packet in or out (the operator's view).
        self.last_activity_at = time.time()

    # --- lifecycle -----------------------------------------------------------------------
    async def start(self) -> RoomRuntime:
        await self.deps.outbox.ensure_room(self.room_id, self.mode)
        await self._restore_mirror()
        await self.grants.load()
        await self.conversation.load()
        await self.broadcaster.start()
        room, lp = self.room, self.room.local_participant
        ffi_router.narrow_room_events(room)
        room.on("participant_connected", self._on_participant_connected)
        room.on("participant_disconnected", self._on_participant_disconnected)
        room.on("participant_attributes_changed", self._on_attributes_changed)
        room.on("reconnecting", self._on_reconnecting)
        room.on("reconnected", self._on_reconnected)
        room.on("data_received", self.inbound.on_data)
        room.on("disconnected", self._on_disconnected)
        lp.register_rpc_method(RPC_PROMPT, self.intake.on_prompt_rpc)
        lp.register_rpc_method(RPC_CANCEL, self.intake.on_cancel_rpc)
        lp.register_rpc_method(RPC_REVERT, self.reverter.on_revert_rpc)
        lp.register_rpc_method(RPC_CONVERSATION, self.conversation_requests.on_conversation_rpc)
        lp.register_rpc_method(RPC_SUMMON, self.crew.on_summon_rpc)
        lp.register_rpc_method(RPC_RENAME, self.crew.on_rename_rpc)
        lp.register_rpc_method(RPC_DISMISS, self.crew.on_dismiss_rpc)
        lp.register_rpc_method(RPC_ABORT, self.steering.on_abort_rpc)
        lp.register_rpc_method(RPC_REVERT_PROJECT, self.steering.on_revert_project_rpc)
        self.livekit.start()  # `lk.chat` prompts, and `lk.agent.state` from idle on
        # After lk.chat's own handler: the inbox then meters every other topic's streams.
        self.inbox.attach(room, {TOPIC_TRANSCRIPTION: self.intake.on_transcription})
        # Ready means ready: a browser that sees the attribute may call our RPC methods at once;
        # and before the participants, so what we send them is not dropped as from a stranger.
        await self._announce()
        for p in room.remote_participants.values():
            self._on_participant_connected(p)
        if self.voice is not None:  # after the participants: it asks who may prompt
            self.voice.start()
        # After the participants are known, so the withdrawals reach every browser live.
        self._spawn(self._end_interrupted())
        metrics.CONNECTED_ROOMS.inc()
        log.info(
            "room_serving",
            room=self.room_id,
            mode=self.mode,
            participants=len(room.remote_participants),
            room_order=self.broadcaster.room_order,
        )
        return self

    async def close(self, *, disconnect: bool = True) -> None:
        if self.closed.is_set():
            return
        self.closed.set()
        room = self.room_id
        if self.voice is not None:
            await close_within(self.voice.close(), "voice", room=room)
        await close_within(self.sessions.close(), "sessions", room=room)
        await self.livekit.close()
        await close_within(self.snapshots.close(), "context", room=room)
        await close_within(self.broadcaster.close(), "broadcaster", room=room)
        self.participants.close()
        self._tasks.cancel()
        metrics.CONNECTED_ROOMS.dec()
        if disconnect:
            await close_within(self.room.disconnect(), "disconnect", room=room)
        log.info("room_closed", room=self.room_id)

    async def _announce(self) -> None:
        """Browsers drop packets from a participant they do not know yet, and the SFU may
        batch a join for up to 3 s; an attribute change is announced at once."""
        if not await self._may_speak(ATTR_READY):
            return
        try:
            ready = str(int(time.time() * 1000))
            await self.room.local_participant.set_attributes({ATTR_READY: ready})
        except Exception as err:  # a token without the grant: browsers learn of us later
            log.warning("steward_announce_failed", room=self.room_id, error=str(err))

    async def _end_interrupted(self) -> None:
        try:
            for session_id in await self.deps.outbox.interrupted_sessions(self.room_id):
                try:
                    await self.sessions.end_interrupted(session_id)
                except Exception as err:  # left running in Postgres: the next start tries again
                    log.warning(
                        "interrupted_session_not_ended",
                        room=self.room_id,
                        session_id=session_id,
                        error=str(err),
                    )
        finally:
            self.interrupted_ended.set()

    async def _restore_mirror(self) -> None:
        """Rebuild the mirror from the outbox, so a restarted steward sees the canvas."""
        assembler = FragmentAssembler()
        rows = await self.deps.outbox.room_history(self.room_id)
        for row in rows:
            env = ActionEnvelope.model_validate_json(row.payload)
            for action in env.actions:
                if is_fragment(action.params):
                    params = assembler.add(action.id, action.params)
                    if params is None:
                        continue
                    action = action.model_copy(update={"params": params})
                self.mirror.apply_one(action, partial=bool(env.partial), session=env.session_id)

    def _spawn(self, coro: Awaitable[Any]) -> None:
        self._tasks.spawn(coro)

    # --- the operator's view ------------------------------------------------------------
    def overview(self) -> dict[str, Any]:
        """Host, participants and running sessions (`GET /api/rooms`)."""
        members = sorted(self.participants.all(), key=lambda m: (m.joined_at_ms, m.identity))
        return {
            "room": self.room_id,
            "apply_mode": self.mode,
            "host": self.participants.host,
            "participants": [
                {
                    "identity": m.identity,
                    "role": m.role,
                    "capabilities": sorted(m.capabilities),
                    "unacked": self.broadcaster.unacked(m.identity),
                    "muted": m.identity in self.abuse.muted,
                }
                for m in members
            ],
            "sessions": self.sessions.overview(),
            "unacked": self.broadcaster.total_unacked(),
            "last_activity_at": round(self.last_activity_at, 3),
        }

    # --- prompts -------------------------------------------------------------------------
    async def run_prompt(self, prompt: PromptInput, session_id: str | None = None) -> str:
        """Start a session (HTTP and in-process callers); returns its id."""
        return await self.sessions.start(prompt, session_id)

    # --- voice ---------------------------------------------------------------------------
    def _hearing(self, identity: str) -> Hearing:
        member = self.participants.get(identity)
        if member is not None and self.intake.may_prompt(member):
            return "prompt"
        return self.deps.settings.steward_stt_unprivileged

    async def _voice_final(self, speaker: str, text: str, _ended_at: float) -> None:
        await self.intake.voice_final(speaker, text)

    def _track_owner(self, track_sid: str) -> str | None:
        for p in self.room.remote_participants.values():
            if track_sid in p.track_publications:
                return p.identity
        return None

    # --- outbound ------------------------------------------------------------------------
    def _recipients(self) -> list[str]:
        if self.mode == "host":
            host = self.participants.host
            return [host] if host else []
        return self.participants.appliers()

    def _publish_action(
        self, payload: bytes, *, topic: str, destinations: list[str]
    ) -> asyncio.Future[None]:
        if self.silenced:  # live sends passed the outbox fence; replays and retransmits not
            done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            done.set_result(None)
            return done
        self.last_activity_at = time.time()
        return ffi_router.publish(
            self.room.local_participant, payload, topic=topic, destinations=destinations
        )

    async def _publish_all(
        self, payload: bytes, topic: str, destinations: list[str] | None = None
    ) -> None:
        if await self._may_speak(topic):
            await ffi_router.publish(
                self.room.local_participant, payload, topic=topic, destinations=destinations
            )

    async def _may_speak(self, topic: str) -> bool:
        """Only while this process holds the room's lease: a replaced steward says nothing."""
        gate = self.deps.holds_lease
        held = gate is None or await gate(self.room_id)
        if held == self.silenced:
            self.silenced = not held
            log.warning("room_silenced" if not held else "room_unsilenced", room=self.room_id)
        if not held:
            log.info("publish_withheld", room=self.room_id, topic=topic)
        return held

    # --- participants --------------------------------------------------------------------
    def _on_participant_connected(self, p: rtc.RemoteParticipant) -> None:
        self.participants.joined(p.identity, _joined_ms(p), dict(p.attributes), p.sid)
        self.abuse.rejoined(p.identity)  # a muted identity's new connection is muted again

    def _on_participant_disconnected(self, p: rtc.RemoteParticipant) -> None:
        self.participants.left(p.identity)

    def _on_attributes_changed(self, changed: dict[str, str], p: rtc.Participant) -> None:
        if isinstance(p, rtc.RemoteParticipant):
            self.participants.attributes_changed(p.identity, dict(p.attributes))

    def _on_reconnecting(self) -> None:
        log.warning("steward_reconnecting", room=self.room_id)
        self.participants.connection_reconnecting()

    def _on_reconnected(self) -> None:
        log.info("steward_reconnected", room=self.room_id)
        self.participants.connection_reconnected(lambda: set(self.room.remote_participants))
        for p in self.room.remote_participants.values():
            self._on_participant_connected(p)

    def _on_disconnected(self, reason: Any = None) -> None:
        log.warning("steward_disconnected", room=self.room_id, reason=str(reason))
        if not self.closed.is_set():
            self._spawn(self.close(disconnect=False))

    def _on_joined(self, identity: str) -> None:
        """A new browser catches up from the outbox: the room's history in room order.

        Replayed by the steward rather than on the browser's request, because a browser's
        first packets can arrive before the SDK knows who sent them. The fairies' presence
        and the room's recent project cards follow.
        """
        self._spawn(self.standing.joined(identity))
        if identity in self._recipients():
            self._spawn(
                self.broadcaster.resync_room(
                    identity, skip_acked=False, shared_document=self.mode == "host"
                )
            )

    def _on_left(self, identity: str) -> None:
        self.departures.left(identity)

    def _on_muted(self, identity: str, for_s: float) -> None:
        self.departures.muted(identity, for_s)

    def _on_host_changed(self, old: str | None, new: str | None) -> None:
        """Host mode: the new host continues the runs where the old one stopped; what the old
        host applied reaches it through the app's own document sync, not from us."""
        if self.mode == "host" and old is not None and new is not None:
            self.broadcaster.hand_over(old, new)

    # --- inbound data --------------------------------------------------------------------
    def _is_muted(self, identity: str) -> bool:
        return identity in self.abuse.muted

    @property
    def rejected(self) -> list[tuple[str, str, str]]:
        """The newest refusals (topic, sender, reason)."""
        return self.inbound.rejected

    @property
    def dropped_from_muted(self) -> int:
        """Packets of muted senders dropped unread (LiveKit forwards what it had in flight)."""
        return self.inbound.dropped_from_muted

    def _active(self) -> None:
        self.last_activity_at = time.time()

    def _applies(self, identity: str) -> bool:
        """In host mode only the host applies envelopes (and may ask for them again)."""
        return self.mode != "host" or identity == self.participants.host

    def _strike(self, identity: str, reason: str, weight: int) -> None:
        self.abuse.strike(identity, reason, weight=weight)

    def _on_edit(self, sender: str, edit: CanvasEdit) -> Awaitable[None]:
        actions = self.relay.accept(sender, edit)
        ids = [str(r["id"]) for r in edit.put]
        self.user_edits.record(sender, ids, edit.remove, lambda sid: sid in self.mirror.shapes)
        return self.relay.send(sender, actions)

    async def _on_resync(self, sender: str, req: Resync) -> None:
        """A tab asking for the whole room (it connected, or reconnected) also gets what
        stands: sent on join too, but a tab may drop what arrives before it knows us."""
        if req.session_id == RESYNC_ALL_SESSIONS:
            self._spawn(self.standing.asked(sender))
        await self.resyncs.on_resync(sender, req)

    def _on_ack(self, sender: str, ack: Ack) -> None:
        refused = self.broadcaster.on_ack(sender, ack)
        if refused is not None:
            self.inbound.reject(TOPIC_ACK, sender, refused, f"{ack.session_id[:64]} seq {ack.seq}")

    def _on_viewport(self, sender: str, update: ViewportUpdate) -> None:
        self.snapshots.cache.viewport_changed(sender, self.views.update(sender, update))
