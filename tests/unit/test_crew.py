"""The room's crew: the rules of a change, and who may make one (grants)."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import ValidationError

from steward.access import prompt_grant
from steward.protocol.messages import RenameRequest, SummonRequest
from steward.room.inbound.crew import CrewChanges, CrewPolicy
from steward.room.inbound.grants import GrantBook
from steward.room.inbound.intake import Intake
from steward.room.participants import Participants
from steward.store.crew import CrewMate, CrewRefused, active, dismissed, renamed, summoned

KEY = "k" * 40
NOW = 1_800_000_000
DEFAULT = [
    CrewMate("fairy-1", 0, "Bramble", "violet", "orchestrator"),
    CrewMate("fairy-2", 1, "Clover", "green", "drone"),
    CrewMate("fairy-3", 2, "Fennel", "orange", "drone"),
]


def test_a_summoned_fairy_is_a_drone_with_a_new_id_and_a_free_colour() -> None:
    mate = summoned(DEFAULT, name="Wisp", personality="calm", color=None, limit=6)
    assert (mate.fairy_id, mate.position, mate.role) == ("fairy-4", 3, "drone")
    assert mate.color not in {m.color for m in DEFAULT}
    assert summoned(DEFAULT, name="Wisp", personality="", color="red", limit=6).color == "red"


def test_a_dismissed_fairys_id_is_never_handed_out_again() -> None:
    crew = [*DEFAULT[:2], CrewMate("fairy-3", 2, "Fennel", "orange", "drone", dismissed=True)]
    mate = summoned(crew, name="Fennel", personality="", color=None, limit=3)
    assert mate.fairy_id == "fairy-4"  # and the name is free again


def test_summon_refuses_past_the_limit_and_a_name_taken() -> None:
    with pytest.raises(CrewRefused, match="full \\(3 fairies\\)"):
        summoned(DEFAULT, name="Wisp", personality="", color=None, limit=3)
    with pytest.raises(CrewRefused, match='already has a fairy named "Clover"'):
        summoned(DEFAULT, name="cLOVER", personality="", color=None, limit=6)


def test_rename_and_its_refusals() -> None:
    assert renamed(DEFAULT, "fairy-2", "Moss").name == "Moss"
    assert renamed(DEFAULT, "fairy-2", "CLOVER").name == "CLOVER"  # its own name, recased
    with pytest.raises(CrewRefused, match="already has a fairy named"):
        renamed(DEFAULT, "fairy-2", "fennel")
    with pytest.raises(CrewRefused, match=r'no fairy "fairy-9".*Bramble \(fairy-1\)'):
        renamed(DEFAULT, "fairy-9", "Moss")


def test_dismissing_the_lead_hands_the_lead_on_and_the_last_fairy_stays() -> None:
    gone, lead = dismissed(DEFAULT, "fairy-1")
    assert gone.dismissed and (lead.fairy_id, lead.role) == ("fairy-2", "orchestrator")
    (only,) = dismissed(DEFAULT, "fairy-3")
    crew = [only if m.fairy_id == "fairy-3" else m for m in DEFAULT]
    assert [m.fairy_id for m in active(crew)] == ["fairy-1", "fairy-2"]
    with pytest.raises(CrewRefused, match="no fairy"):
        dismissed(crew, "fairy-3")  # dismissed already
    with pytest.raises(CrewRefused, match="at least one fairy"):
        dismissed(DEFAULT[:1], "fairy-1")


def test_bad_names_are_refused_by_the_protocol() -> None:
    assert SummonRequest.model_validate({"name": "  Wisp \n the  Second "}).name == (
        "Wisp the Second"
    )
    for bad in ({"name": ""}, {"name": "   "}, {"name": "x" * 33}, {"name": "Ok", "color": "pink"}):
        with pytest.raises(ValidationError):
            SummonRequest.model_validate(bad)
    with pytest.raises(ValidationError):
        RenameRequest.model_validate({"fairyId": "fairy-1", "name": "y" * 40})


def _room(policy: CrewPolicy, room: str = "r1") -> tuple[Participants, CrewChanges]:
    participants = Participants()
    book = GrantBook(room, [KEY], clock=lambda: NOW)
    intake = Intake(room, participants, _never_start, lambda _s, _c: False, verify_grant=book.check)
    return participants, CrewChanges(room, participants, intake, None, None, policy=policy)


async def _never_start(_prompt: object) -> str:
    raise AssertionError("no prompt here")


def _grant(identity: str, *, room: str = "r1", scope: str = "p") -> dict[str, str]:
    value = prompt_grant(KEY, room=room, identity=identity, expires_at=NOW + 60, scope=scope)  # type: ignore[arg-type]
    return {"steward.can_prompt": value}


async def test_any_prompter_may_change_the_crew_by_default() -> None:
    participants, crew = _room("prompters")
    participants.joined("ann", 1, _grant("ann"), sid="PA_ann")
    participants.joined("bob", 2, {}, sid="PA_bob")
    participants.joined("eve", 3, _grant("eve", room="r2"), sid="PA_eve")  # another room's
    assert crew.refusal("ann") is None
    assert crew.refusal("bob") == "not allowed to change this room's crew"
    assert crew.refusal("eve") == "not allowed to change this room's crew"
    assert crew.refusal("nobody") == "not allowed to change this room's crew"
    await asyncio.sleep(0)


async def test_moderators_only_when_configured_and_grants_are_not_replayed() -> None:
    participants, crew = _room("moderators")
    participants.joined("ann", 1, _grant("ann"), sid="PA_ann")
    mod = _grant("mia", scope="pm")
    participants.joined("mia", 2, mod, sid="PA_mia")
    assert crew.refusal("ann") == "only a moderator may change this room's crew"
    assert crew.refusal("mia") is None
    # Mia's grant value copied into a second connection of hers is refused there.
    participants.joined("mia", 3, mod, sid="PA_mia_2")
    assert crew.refusal("mia") == "not allowed to change this room's crew"
    # A forged moderator scope on Ann's grant does not verify.
    forged = {"steward.can_prompt": _grant("ann")["steward.can_prompt"].replace(".p.", ".pm.")}
    participants.joined("ann", 4, forged, sid="PA_ann_2")
    assert crew.refusal("ann") == "not allowed to change this room's crew"
    await asyncio.sleep(0)


async def test_changes_without_fairies_say_so() -> None:
    participants, crew = _room("prompters")
    participants.joined("ann", 1, _grant("ann"), sid="PA_ann")
    reply = await crew.summon("ann", SummonRequest(name="Wisp"))
    assert reply.error == "this steward runs no fairies" and reply.fairy is None
