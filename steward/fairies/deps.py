"""What the fairies depend on, in one object: the records they write, the store a resume
reads, the sessions they open, the models they call, the budget every model request is
charged to, and how many follow-ups one request may run. The runtime builds it once and
hands it to the request runner, the actions' effects and resume, as actions get theirs.
"""

from __future__ import annotations

from dataclasses import dataclass

from steward.fairies.fairy_sessions import SessionFactory
from steward.fairies.role_models import ModelFactory
from steward.fairies.room_records import RoomRecords
from steward.store.fairies import FairyStore
from steward.turns.model_budget import RoomBudget


@dataclass
class FairyDeps:
    """Everything the fairy runtime needs from outside it, built once by the service."""

    records: RoomRecords
    models: ModelFactory
    store: FairyStore | None = None
    sessions: SessionFactory | None = None
    # Checked before, and charged after, every model request of a crew fairy.
    budget: RoomBudget | None = None
    # Follow-up requests one request may run (review, add-detail, setMyView, data, todo).
    max_followups: int = 3
