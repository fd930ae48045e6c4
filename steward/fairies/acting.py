"""A fairy action carried out: the fairy runtime's side of the fairy port.

`ActingFairy` implements `steward.actions.fairy_port.FairyPort` for the fairy that took the
action. The action's effect (on its spec, `steward/actions/fairy/`) changes the board at
once and asks for reactions; `carry_out` records the action, then runs the reactions in the
order asked. A broken rule (`FairyMistake`) becomes feedback instead, and no reaction runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from steward.actions.fairy_port import ModeName, ProjectView, TaskView
from steward.actions.mistakes import FairyMistake
from steward.actions.registry import Outcome
from steward.fairies.interrupts import Interrupt, decide, feedback
from steward.fairies.memory import (
    HistoryItem,
    action_item,
    feedback_item,
    project_end_items,
    task_end_items,
)
from steward.fairies.modes import mode
from steward.fairies.projects import ProjectBoard, completed_task_id, task_completed_key
from steward.fairies.room_fairies import RoomFairies
from steward.fairies.room_records import RoomRecords
from steward.fairies.scheduler import Scheduler
from steward.obs.logging import get_logger
from steward.protocol.box import Box
from steward.turns.turn import record_outcome

log = get_logger(__name__)

_Reaction = Callable[[], Awaitable[None]]


class ActingFairy:
    """One fairy acting in its room; its reactions wait in `reactions` until `react()`."""

    def __init__(
        self, records: RoomRecords, scheduler: Scheduler, room: RoomFairies, fairy_id: str
    ) -> None:
        self._records = records
        self._scheduler = scheduler
        self._room = room
        self._fairy_id = fairy_id
        self.reactions: list[_Reaction] = []
        self.ended = False

    @property
    def fairy_id(self) -> str:
        return self._fairy_id

    @property
    def board(self) -> ProjectBoard:
        return self._room.board

    def free_drones(self) -> list[str]:
        return self._room.free_members(self._fairy_id)

    def move(self, area: Box) -> None:
        room = self._room
        room.roster.fly_to(self._fairy_id, area)
        room.fairy(self._fairy_id).view = area  # its next requests look where it flew

        async def moved() -> None:
            await self._records.save_fairy(room, self._fairy_id)
            await room.roster.announce()

        self.reactions.append(moved)

    def switch_mode(self, mode: ModeName, work: str | None = None) -> None:
        sched, room, me = self._scheduler, self._room, self._fairy_id

        async def switch() -> None:
            await sched.set_mode(room, me, mode)
            if work:
                room.fairy(me).self_interrupted = True
                await sched.submit(room, me, work, "self")

        self.reactions.append(switch)

    def interrupt(self, fairy_id: str, mode: ModeName, work: str | None = None) -> None:
        if fairy_id == self._fairy_id:
            self.switch_mode(mode, work)
            return
        sched, room = self._scheduler, self._room

        async def interrupt() -> None:
            lead, other = room.fairy(self._fairy_id), room.fairy(fairy_id)
            other.model = lead.model  # drones use their lead's
            if lead.asker is not None:
                other.asker = lead.asker
            await self._records.save_fairy(room, fairy_id)
            await sched.interrupt(room, fairy_id, Interrupt("system", mode=mode, input=work))

        self.reactions.append(interrupt)

    def wait(self, wakes: list[tuple[str, str]]) -> None:
        sched, room = self._scheduler, self._room

        async def wait() -> None:
            # A task can finish between this action's effect and now (its drone's notify
            # ran while this turn was saving): nothing would wake that wait, so wake now.
            done = [(k, m) for k, m in wakes if self._task_done(k)]
            if room.waits.wait(self._fairy_id, [w for w in wakes if w not in done]):
                await self._records.save_waits(room)
            for _, message in done:
                await sched.submit(room, self._fairy_id, message, "wake")

        self.reactions.append(wait)

    def _task_done(self, key: str) -> bool:
        tid = completed_task_id(key)
        task = self._room.board.tasks.get(tid) if tid is not None else None
        return task is not None and task.status == "done"

    def notify_task_done(self, task_id: str) -> None:
        sched, room = self._scheduler, self._room

        async def notify() -> None:
            await sched.notify(room, task_completed_key(task_id))

        self.reactions.append(notify)

    def remember_task_end(self, task: TaskView, back: ModeName) -> None:
        items = task_end_items(task.id, task.title, task.text, level=mode(back).memory)
        self._remember(self._fairy_id, items)

    def remember_project_end(self, fairy_id: str, project: ProjectView) -> None:
        led = fairy_id == project.orchestrator
        members = list(project.members) if led else []
        self._remember(fairy_id, project_end_items(project.title, members, led=led))

    def _remember(self, fairy_id: str, items: list[HistoryItem]) -> None:
        records, room = self._records, self._room

        async def remember() -> None:
            await records.remember(room, fairy_id, items)

        self.reactions.append(remember)

    def review(self, message: str) -> None:
        sched, room, me = self._scheduler, self._room, self._fairy_id

        async def review() -> None:
            room.fairy(me).self_interrupted = True  # the next prompt is set: no nudge
            if not room.fairy(me).queue:  # a queued wake already says the same
                await sched.submit(room, me, message, "system")

        self.reactions.append(review)

    def end_turn(self) -> None:
        self.ended = True

    async def react(self) -> None:
        for reaction in self.reactions:
            await reaction()


async def carry_out(
    records: RoomRecords, scheduler: Scheduler, room: RoomFairies, fairy_id: str, out: Outcome
) -> bool:
    """Carry out a complete fairy action's effect (its spec's). True: the turn ends here."""
    name, data = out.name, out.data
    assert out.spec is not None and out.spec.effect is not None
    current = mode(room.roster.get(fairy_id).mode)
    session = room.fairy(fairy_id).session
    session_id = session.session_id if session is not None else ""
    acting = ActingFairy(records, scheduler, room, fairy_id)
    try:
        out.spec.effect(acting, data)
    except FairyMistake as mistake:
        log.info("fairy_mistake", room=room.room_id, fairy=fairy_id, action=name)
        record_outcome(room.room_id, session_id, name, mistake.feedback)
        await records.save_board(room)
        await records.remember(
            room,
            fairy_id,
            [
                action_item(name, data, current.memory),
                feedback_item(mistake.feedback, current.memory),
            ],
        )
        # Feedback through an interrupt: the rest of this turn is dropped.
        d = decide(current.name, room.facts(fairy_id, "system"), feedback(mistake.feedback))
        room.fairy(fairy_id).mistaken = True
        if d.schedule is not None:
            await scheduler.feed_back(room, fairy_id, d.schedule)
        return True
    record_outcome(room.room_id, session_id, name)
    room.count(fairy_id, 1)
    await records.remember(room, fairy_id, [action_item(name, data, current.memory)])
    await records.save_board(room)
    await acting.react()
    return acting.ended
