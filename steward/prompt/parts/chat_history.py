"""Earlier in this chat: the requests and what the agent did, in the response format.

Items are rendered as the model writes them (an action is its JSON; a run of many actions of
one kind becomes one line, "created 12 shapes: ids"); other askers' runs in the room are one
line each (who asked what, what was done); and the whole is bounded: the newest items are
shown in full, the first request and the plan always, and everything else between them as a
compact digest, so a long history never loses its thread nor grows without limit.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from steward.actions.registry import ACTIONS
from steward.prompt.base import Block, PromptPart, text
from steward.prompt.state import ChatItem, PromptState

# What the history may take of the prompt (≈ 2,000 tokens), and any one line of it.
BUDGET_CHARS = 8000
LINE_CHARS = 600
# Pinned lines beyond the first request (the plan's actions) are shown up to this many.
MAX_PINNED = 8
# A run of at least this many actions of one kind is summarised as one line.
GROUP_MIN = 3
# The ids a summarised run lists (a later request edits shapes by id: a street of three
# houses is ~50 shapes; an id costs about 3 tokens).
_IDS_SHOWN = 60
_QUOTE_CHARS = 80
# A long list in one action (e.g. the ids of a bringToFront) keeps this many entries, then
# says how many more there were, so a cut list never reads as the whole.
_LIST_SHOWN = 12
_MADE = "made"  # the bucket of every action that makes a shape
_VERBS = {
    _MADE: "created",
    "delete": "deleted",
    "update": "updated",
    "move": "moved",
    "label": "labelled",
    "resize": "resized",
    "rotate": "rotated",
    "place": "placed",
}


def filter_history(items: list[ChatItem], level: str) -> list[ChatItem]:
    return [i for i in items if i.level == level]


def thread_for(items: Sequence[ChatItem], run: str | None) -> list[ChatItem]:
    """The history a run's request shows: all but its own request (the `messages` part)."""
    return [i for i in items if not (run is not None and i.run == run and i.role == "user")]


def keep_bounded(items: list[ChatItem], cap: int) -> None:
    """Drop the oldest items beyond `cap`, in place, but never the first request."""
    if len(items) <= cap:
        return
    first = next((i for i in items if i.role == "user"), None)
    tail = items[-(cap - 1) :] if cap > 1 else []
    items[:] = ([first] if first is not None and first not in tail else []) + tail


# -- one item or group as a line ---------------------------------------------------------


def _public(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: x for k, x in v.items() if not k.startswith("_") or k == "_type"}
    return v


# Fields that hold an x or a y coordinate wherever they appear in an action (a shape's, an
# area's, a point's, a scale or turn origin); sizes and offsets need no shift.
_X_KEYS = frozenset({"x", "x1", "x2", "originX"})
_Y_KEYS = frozenset({"y", "y1", "y2", "originY"})
Frame = tuple[float, float]


def _shifted(v: Any, dx: float, dy: float) -> Any:
    if isinstance(v, list):
        return [_shifted(x, dx, dy) for x in v]
    if not isinstance(v, dict):
        return v
    out: dict[str, Any] = {}
    for k, x in v.items():
        by = dx if k in _X_KEYS else dy if k in _Y_KEYS else None
        if by is not None and isinstance(x, (int, float)) and not isinstance(x, bool):
            moved = x + by
            out[k] = int(moved) if float(moved).is_integer() else round(moved, 2)
        else:
            out[k] = _shifted(x, dx, dy)
    return out


def _whole(v: Any) -> Any:
    """Whole floats as integers (430.0 reads 430): every number a model reads is whole where
    it can be; a scale of 1.5 stays 1.5."""
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, list):
        return [_whole(x) for x in v]
    if isinstance(v, dict):
        return {k: _whole(x) for k, x in v.items()}
    return v


def model_action(data: dict[str, Any], to: Frame | None = None) -> dict[str, Any]:
    """An action as the model wrote it: `_type` first, the steward's own `_` keys dropped;
    with `to`, its coordinates moved from the frame of the request that wrote it (`_frame`,
    the page point that was its 0, 0) into the frame whose 0, 0 is `to`."""
    out: dict[str, Any] = {"_type": data.get("_type")}
    out.update({k: _whole(_public(v)) for k, v in data.items() if not k.startswith("_")})
    frame = data.get("_frame")
    if to is not None and isinstance(frame, (list, tuple)) and len(frame) == 2:
        dx, dy = float(frame[0]) - to[0], float(frame[1]) - to[1]
        if dx or dy:
            shifted: dict[str, Any] = _shifted(out, dx, dy)
            return shifted
    return out


def _kind(item: ChatItem) -> str | None:
    return str(item.action.get("_type")) if item.action is not None else None


def _clip(s: str, n: int) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


def _shorten(v: Any) -> Any:
    if isinstance(v, str):
        return _clip(v, _QUOTE_CHARS)
    if isinstance(v, dict):
        return {k: _shorten(x) for k, x in v.items()}
    if isinstance(v, list):
        more = [f"… +{len(v) - _LIST_SHOWN} more"] if len(v) > _LIST_SHOWN else []
        return [_shorten(x) for x in v[:_LIST_SHOWN]] + more
    return v


def _ids(action: dict[str, Any]) -> list[str]:
    shape = action.get("shape")
    listed = action.get("shapeIds")  # what the model wrote: not always a list
    found: list[Any] = [
        action.get("shapeId"),
        shape.get("shapeId") if isinstance(shape, dict) else None,
        *(listed if isinstance(listed, list) else []),
    ]
    return [str(i) for i in found if isinstance(i, str | int) and str(i)]


def _id_list(ids: Iterable[str]) -> str:
    seen = list(dict.fromkeys(ids))
    more = f" (+{len(seen) - _IDS_SHOWN} more)" if len(seen) > _IDS_SHOWN else ""
    return ", ".join(seen[:_IDS_SHOWN]) + more


def render_action(data: dict[str, Any], to: Frame | None = None) -> str:
    """One action as compact JSON; long strings clipped, and a still-long action summarised."""
    action = model_action(data, to)
    full = json.dumps(action, separators=(",", ":"), ensure_ascii=False)
    if len(full) <= LINE_CHARS // 2:
        return full
    short = json.dumps(_shorten(action), separators=(",", ":"), ensure_ascii=False)
    if len(short) <= LINE_CHARS:
        return short
    return summarise_actions([action])


def summarise_actions(actions: Sequence[dict[str, Any]]) -> str:
    """'created 12 shapes: a, b, …' for a run of actions of one kind (or a mixed bag)."""
    kinds: dict[str, list[dict[str, Any]]] = {}
    for a in actions:
        kind = str(a.get("_type"))
        spec = ACTIONS.get(kind)
        # Every action that makes a shape (a create, a pen line) counts in one "created",
        # as the shape lists count what is on the canvas.
        kinds.setdefault(_MADE if spec is not None and spec.creates else kind, []).append(a)
    parts = []
    for kind, acts in kinds.items():
        ids = [i for a in acts for i in _ids(a)]
        verb = _VERBS.get(kind)
        what = f"{verb} {len(ids)} shape(s)" if verb and ids else f"{len(acts)} × {kind}"
        # Which tasks a run of task actions named (three starts say which three).
        ids = ids or [str(t) for a in acts if isinstance(t := a.get("taskId"), str | int)]
        parts.append(f"{what}: {_id_list(ids)}" if ids else what)
    return "; ".join(parts)


@dataclass
class _Line:
    text: str
    pinned: bool = False
    request: str | None = None  # the request's words, for a digest
    actions: tuple[dict[str, Any], ...] = ()
    said: int = 0


def _tag(item: ChatItem) -> str:
    """A line's label, as the guide explains it: whose request, the agent's own, or the
    steward's."""
    if item.role == "user":
        return f"[{item.asked_by or item.who or 'someone'} asked]"
    return "[steward]" if item.role == "system" else "[you]"


def _said(action: dict[str, Any]) -> str | None:
    """What an action said in the chat (its spec's `chat`), or None for any other action."""
    spec = ACTIONS.get(str(action.get("_type")))
    return spec.chat(action) if spec is not None and spec.chat is not None else None


def _own_lines(items: Sequence[ChatItem], to: Frame | None) -> list[_Line]:
    lines: list[_Line] = []
    i = 0
    while i < len(items):
        item = items[i]
        if item.action is None or _said(item.action) is not None:
            said = item.action is not None
            body = render_action(item.action, to) if item.action is not None else item.text
            request = item.text if item.role == "user" else None
            lines.append(_Line(f"{_tag(item)} {body}", item.pinned, request, said=int(said)))
            i += 1
            continue
        j = i
        while j < len(items) and _kind(items[j]) == _kind(item) and not items[j].pinned:
            j += 1
        if j - i >= GROUP_MIN:
            acts = tuple(model_action(x.action, to) for x in items[i:j] if x.action is not None)
            lines.append(_Line(f"[you, {j - i} actions] {summarise_actions(acts)}", actions=acts))
            i = j
        else:
            act = model_action(item.action, to)
            lines.append(_Line(f"[you] {render_action(act)}", item.pinned, actions=(act,)))
            i += 1
    return lines


def _run_tag(who: str, crew: bool) -> str:
    """How a run is named: whose it is (the request says who asks now; "your" read as the
    model's own work), and whether a project's fairies did it."""
    return f"[{who}'s project run]" if crew else f"[{who}'s run]"


def _other_run(items: Sequence[ChatItem], to: Frame | None) -> _Line:
    """Another asker's run, or a project run, in one line: who asked what, what was done,
    what was said."""
    who = next((i.who for i in items if i.who), "someone")
    asked = [i.text for i in items if i.role == "user"]
    acts = tuple(model_action(i.action, to) for i in items if i.action and _said(i.action) is None)
    said = [text for i in items if i.action and (text := _said(i.action)) is not None]
    ended = [i.text for i in items if i.ended]
    bits = [f'asked "{_clip(asked[0], _QUOTE_CHARS)}"' if asked else "ran"]
    if acts:
        bits.append(summarise_actions(acts))
    if said:
        bits.append(f'said "{_clip(said[-1], _QUOTE_CHARS)}"')
    if ended:  # it did only what the line lists: neither done nor owed
        bits.append(ended[-1].rstrip("."))
    tag = _run_tag(who, any(i.crew for i in items))
    return _Line(_clip(f"{tag} " + "; ".join(bits), LINE_CHARS), actions=acts)


def history_lines(
    items: Sequence[ChatItem], asker: str | None, to: Frame | None = None
) -> list[_Line]:
    """Every item as a line, oldest first; other askers' runs and project runs one line
    each; actions in the frame whose 0, 0 is `to` (None: as written)."""

    def other(item: ChatItem) -> bool:  # a crew fairy (no asker) sees every asker's as other
        return item.crew or (item.who is not None and item.who != asker)

    lines: list[_Line] = []
    k = 0
    while k < len(items):
        end = k + 1
        if other(items[k]):
            while end < len(items) and other(items[end]) and items[end].run == items[k].run:
                end += 1
            lines.append(_other_run(items[k:end], to))
        else:
            while end < len(items) and not other(items[end]):
                end += 1
            lines.extend(_own_lines(items[k:end], to))
        k = end
    # The first request (or, for a fairy told what to do by another, the first item).
    first = next((ln for ln in lines if ln.request is not None), lines[0] if lines else None)
    if first is not None:
        first.pinned = True
    return lines


def _digest(lines: Sequence[_Line]) -> str:
    asked = [ln.request for ln in lines if ln.request]
    acts = [a for ln in lines for a in ln.actions]
    said = sum(ln.said for ln in lines)
    bits = []
    if asked:
        shown = ", ".join(f'"{_clip(a, 60)}"' for a in asked[-5:])
        bits.append(f"{len(asked)} request(s), the last: {shown}")
    if acts:
        bits.append(summarise_actions(acts))
    if said:
        bits.append(f"{said} message(s) sent")
    return _clip(f"[earlier, {len(lines)} items in brief] " + "; ".join(bits), LINE_CHARS)


def bounded(lines: Sequence[_Line], budget: int = BUDGET_CHARS) -> list[str]:
    """The newest lines in full within `budget`, the pinned ones always (the first request
    and up to MAX_PINNED plan lines), every other older stretch as one digest line."""
    texts = [_clip(ln.text, LINE_CHARS) for ln in lines]
    keep = [False] * len(lines)
    pinned = [n for n, ln in enumerate(lines) if ln.pinned][: MAX_PINNED + 1]
    used = 0
    for n in pinned:
        keep[n] = True
        used += len(texts[n]) + 1
    for n in range(len(lines) - 1, -1, -1):
        if keep[n]:
            continue
        if used + len(texts[n]) + 1 > budget:
            break
        keep[n] = True
        used += len(texts[n]) + 1
    out: list[str] = []
    skipped: list[_Line] = []
    for n, line in enumerate(lines):
        if keep[n]:
            if skipped:
                out.append(_digest(skipped))
                skipped = []
            out.append(texts[n])
        else:
            skipped.append(line)
    if skipped:
        out.append(_digest(skipped))
    return out


def render_history(
    items: Sequence[ChatItem], asker: str | None = None, to: Frame | None = None
) -> list[str]:
    return bounded(history_lines(items, asker, to))


def _build(state: PromptState) -> list[Block]:
    items = filter_history(state.history, state.memory_level)
    if not items:
        return []
    to = (state.coords.origin_x, state.coords.origin_y)
    return text("Earlier in this chat:", *render_history(items, state.asker, to))


_GUIDE = """Earlier requests and what was done about them come first, as far as your memory
reaches (in a project it starts with the project, on a task with the task: what came before is
on the canvas, not here), one line each, labelled:
- [name asked] a request that person made (the request at the end says who asks now);
- [you] an action you wrote, as JSON, as you write it, or a note you kept ("I just finished
  the task …"); [you, N actions] many actions of one kind in one line;
- [steward] a note from the steward: a wake, a correction, or how a run ended (a run that
  timed out, failed or was stopped did only what its line lists);
- [name's run] a run another person asked for in this room, in one line (its work may be yours,
  done for them);
- [name's project run] work a project's fairies (a lead and its members) did for that person,
  who may be the person asking now;
- [earlier, N items in brief] older lines, summarised.
Not every kind appears in every request.
Coordinates in them are in this request's frame. Build on them: do not redo what is done, do
not repeat a message you already sent, and stay consistent with what you told the user."""

PART = PromptPart(
    "chat_history",
    10,
    False,
    _build,
    title="Earlier in this chat",
    guide=_GUIDE,
)
