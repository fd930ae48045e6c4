"""LiveKit's server API as the steward needs it to hand a room to a worker: create an agent
dispatch (AgentDispatchService), delete the ones of stewards gone from the room, ask who is
in a room and remove a dead steward from it (RoomService).

One `LiveKitAdmin` keeps one HTTP session; both the re-dispatch watcher and the HTTP run
for a room no steward serves create their dispatches here.
"""

from __future__ import annotations

from dataclasses import dataclass

from livekit import api

from steward.config import Settings
from steward.obs.logging import get_logger

log = get_logger(__name__)


@dataclass(frozen=True)
class Dispatched:
    """An agent dispatch created for a room, by id."""

    room: str
    dispatch_id: str


def superseded(listed: list[api.AgentDispatch], agent_name: str, keep: str) -> list[str]:
    """Ids of the room's dispatches of `agent_name` other than `keep` (the one whose job
    serves the room): a dead worker's job, or a job that found the room taken."""
    return [d.id for d in listed if d.agent_name == agent_name and d.id != keep]


class LiveKitAdmin:
    """LiveKit's server API over one HTTP session: dispatches, room listing and removal of dead
    stewards."""

    def __init__(self, url: str, api_key: str, api_secret: str, *, agent_name: str) -> None:
        self.url = url
        self.agent_name = agent_name
        self._key = api_key
        self._secret = api_secret
        # Made on first use: its HTTP session must be created inside the running loop.
        self._api: api.LiveKitAPI | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> LiveKitAdmin:
        return cls(
            settings.livekit_url,
            settings.livekit_api_key,
            settings.livekit_api_secret.get_secret_value(),
            agent_name=settings.steward_agent_name,
        )

    def _lk(self) -> api.LiveKitAPI:
        if self._api is None:
            self._api = api.LiveKitAPI(self.url, self._key, self._secret)
        return self._api

    async def dispatch(self, room: str, *, reason: str) -> Dispatched:
        """Ask LiveKit to send the room to a worker registered under our agent name."""
        made = await self._lk().agent_dispatch.create_dispatch(
            api.CreateAgentDispatchRequest(agent_name=self.agent_name, room=room)
        )
        log.info("agent_dispatched", room=room, dispatch=made.id, reason=reason)
        return Dispatched(room, made.id)

    async def dispatches(self, room: str) -> list[api.AgentDispatch]:
        """The room's dispatches LiveKit still lists (a dead worker's stays listed)."""
        return list(await self._lk().agent_dispatch.list_dispatch(room))

    async def retire(self, room: str, *, keep: str) -> list[str]:
        """Delete the room's dispatches other than `keep`. A self-hosted livekit-server keeps
        a dead worker's dispatch listed as active, so each failover would add one."""
        gone = []
        for dispatch_id in superseded(await self.dispatches(room), self.agent_name, keep):
            await self._lk().agent_dispatch.delete_dispatch(dispatch_id, room)
            log.info("agent_dispatch_deleted", room=room, dispatch=dispatch_id, kept=keep)
            gone.append(dispatch_id)
        return gone

    async def browsers(self, room: str) -> list[str]:
        """Identities of the room's people (not agents, e.g. a steward); [] if no such room."""
        try:
            listed = await self._lk().room.list_participants(api.ListParticipantsRequest(room=room))
        except api.TwirpError as err:
            if err.code == api.TwirpErrorCode.NOT_FOUND:
                return []
            raise
        agent = api.ParticipantInfo.Kind.AGENT
        return [p.identity for p in listed.participants if p.kind != agent]

    async def remove(self, room: str, identity: str) -> bool:
        """Take a participant out of the room now; False if it was not there."""
        try:
            await self._lk().room.remove_participant(
                api.RoomParticipantIdentity(room=room, identity=identity)
            )
        except api.TwirpError as err:
            if err.code == api.TwirpErrorCode.NOT_FOUND:
                return False
            raise
        log.info("participant_removed", room=room, participant=identity)
        return True

    async def aclose(self) -> None:
        if self._api is not None:
            await self._api.aclose()
            self._api = None
