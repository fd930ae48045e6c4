"""Creates go before the actions that name them, however the response was chunked.

A model may label or move a shape before the action that creates it. An action that names a
shape nobody has made yet is held (its partial versions too) until a create of that id is
released, then follows it in the model's order; at the end of the stream whatever is still
held goes out in order and fails as it would have. Every decision is made one action at a
time, against the canvas left by the actions released before it, so the order — and so the
final canvas — depends only on the response, never on where the chunks were cut.

Creates are never held: their previews stream before their arrow ends (`fromId`, `toId`)
arrive, and holding one after its preview showed would make the result depend on the
chunking. An arrow drawn before its target is left unbound, and the lints say so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from steward.actions.registry import ACTIONS, normalize_name
from steward.actions.sanitize import clean_id
from steward.model.parser import ParsedAction

# Where the other actions name the shapes they act on.
_REF_KEYS = ("shapeId", "referenceShapeId")
_REF_LIST_KEYS = ("shapeIds",)
_NESTED_REF_KEYS = ("shapeId", "fromId", "toId")


def _creates(data: Mapping[str, Any]) -> str | None:
    name = normalize_name(data.get("_type"))
    return ACTIONS[name].creates if name is not None else None


def created_id(data: Mapping[str, Any]) -> str | None:
    """The id a create or pen action asks for, as the model wrote it (cleaned)."""
    path = _creates(data)
    if path is None:
        return None
    *outer, key = path.split(".")
    node: Any = data
    for part in outer:
        node = node.get(part)
        if not isinstance(node, Mapping):
            return None
    return clean_id(node.get(key))


def named_ids(data: Mapping[str, Any], skip: Sequence[str | int] | None = None) -> set[str]:
    """The ids of shapes an action (other than a create) acts on; `skip` is the key path of
    a string still streaming, which is not an id yet."""
    if _creates(data) is not None:
        return set()
    skipped = tuple(skip) if skip else None
    raw: list[Any] = [data.get(key) for key in _REF_KEYS if skipped != (key,)]
    for key in _REF_LIST_KEYS:
        items = data.get(key)
        if isinstance(items, list):
            raw += [x for i, x in enumerate(items) if skipped != (key, i)]
    for outer in ("update", "shape"):  # an update's fields, under either name
        nested = data.get(outer)
        if isinstance(nested, Mapping):
            raw += [nested.get(key) for key in _NESTED_REF_KEYS if skipped != (outer, key)]
    return {sid for sid in (clean_id(x) for x in raw if x is not None) if sid is not None}


def _streams(data: Mapping[str, Any]) -> bool:
    spec = ACTIONS.get(normalize_name(data.get("_type")) or "")
    return spec is not None and spec.streams


@dataclass
class CreateOrder:
    """Push each parsed event in stream order; process what comes back, in that order."""

    # Whether a shape the model names exists on the canvas now (renames included).
    exists: Callable[[str], bool]
    _made: set[str] = field(default_factory=set)
    _held: list[ParsedAction] = field(default_factory=list)
    # Actions whose preview already showed a shape they name: they are never held after.
    _shown: set[int] = field(default_factory=set)

    def push(self, event: ParsedAction) -> list[ParsedAction]:
        if event.truncated:
            return [event]
        if event.index in self._shown:
            return self._release(event) if event.complete else [event]
        missing = self._missing(event)
        if not event.complete:
            if (
                not missing
                and _streams(event.data)
                and named_ids(event.data, event.incomplete_path)
            ):
                self._shown.add(event.index)
            return [] if missing else [event]
        if missing:
            self._held.append(event)
            return []
        return self._release(event)

    def finish(self) -> list[ParsedAction]:
        """End of stream: what is still waiting goes out in the model's order."""
        held, self._held = self._held, []
        return held

    @property
    def holding(self) -> int:
        return len(self._held)

    def _missing(self, event: ParsedAction) -> bool:
        return any(
            sid not in self._made and not self.exists(sid)
            for sid in named_ids(event.data, event.incomplete_path)
        )

    def _release(self, event: ParsedAction) -> list[ParsedAction]:
        out = [event]
        made = created_id(event.data)
        if made is None:
            return out
        self._made.add(made)
        # A released create may free held actions, which may be creates that free more.
        progress = True
        while progress:
            progress = False
            for held in list(self._held):
                if not self._missing(held):
                    self._held.remove(held)
                    out.append(held)
                    freed = created_id(held.data)
                    if freed is not None and freed not in self._made:
                        self._made.add(freed)
                        progress = True
        return out
