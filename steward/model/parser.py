"""Incremental streaming parser for the model's `{"actions": [...]}` response.

Each character is looked at once (strings and whitespace are skipped with `str.find`), the
JSON tree is built as it arrives, and each action is reported as `partial` while it grows and
once more when it is complete. Partial snapshots are throttled geometrically per action, so
the total work stays linear in the response length even for very long actions.

Handles: prose or a ```json fence before or after the JSON, a prefilled opening (feed it
first) followed by prose, a fence or the same opening again (the first thing inside the
actions array decides: an action, or a restart from prose), a bare top-level array, a JSON
object without actions before the real one, a comma missing between actions, escaped
quotes, \\uXXXX escapes (also split across chunks, and surrogate pairs, whose first half
never shows alone in a partial), NaN/Infinity literals, and output cut off mid-action
(`finish()` reports the unfinished action as `truncated`).

An entry of the actions array that is not an object (`"oops"`, `3`, `null`, `[]`) is skipped
with a note for the model (`take_notes()`), also when it comes first: it is told from prose
restarting the answer by looking at what follows it (a comma or the array's end). An array
or an actions object that held no action at all (a `[]` in prose) does not end the answer:
reading goes on as prose, so the real JSON after it still counts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

_WS = " \t\r\n"
_DELIMS = ",]}" + _WS
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
# A partial snapshot is taken only after the action grew by this fraction (and >= MIN chars).
_GROWTH = 0.125
_MIN_GROWTH = 8
# Containers nested deeper than this are read but kept as null: nothing downstream (copies,
# sanitizers, encoders) ever recurses into model nonsense deep enough to overflow the stack.
MAX_DEPTH = 48


@dataclass
class ParsedAction:
    """One action as far as it has arrived. `index` is stable across partial versions."""

    index: int
    data: dict[str, Any]
    complete: bool
    # Key path (inside `data`) of a string that is still being streamed, if any.
    incomplete_path: tuple[str | int, ...] | None = None
    truncated: bool = False


@dataclass
class _Frame:
    container: dict[str, Any] | list[Any]
    key: str | None = None  # dict frames: the key whose value is being read
    slot: str | int = ""  # where this container sits in its parent
    detached: bool = False  # beyond MAX_DEPTH: parsed, then thrown away


# Parser states. _FIRST: just inside the actions array, looking ahead at what comes first.
_PROSE, _MAYBE, _VALUE, _KEY, _COLON, _AFTER, _STRING, _TOKEN, _DONE, _FIRST = range(10)
_OPENING_KEY = '"actions"'
# How far the look-ahead at a first entry that is not an object may go before it is prose.
_MAX_LOOK = 4096
_LITERALS = frozenset({"null", "true", "false", "NaN", "Infinity", "-Infinity"})


def _kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, list):
        return "an array"
    return "a string" if isinstance(value, str) else "not an object"


def _value_end(text: str) -> int | None:
    """Where the JSON value `text` starts with ends: an index, None while it may still be
    arriving, -1 when it is no JSON value (then the text is prose)."""
    c = text[0]
    if c in '"[':
        depth, i, in_str = 0, 0, False
        while i < len(text):
            ch = text[i]
            if in_str:
                if ch == "\\":
                    i += 1
                elif ch == '"':
                    in_str = False
                    if depth == 0:
                        return i + 1
            elif ch == '"':
                in_str = True
            elif ch in "[{":
                depth += 1
            elif ch in "]}":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return None
    j = 0
    while j < len(text) and text[j] not in _DELIMS:
        j += 1
    if j == len(text):
        return None
    word = text[:j]
    if word in _LITERALS:
        return j
    try:
        float(word)
    except ValueError:
        return -1
    return j


def _is_high_surrogate(ch: str) -> bool:
    return "\ud800" <= ch <= "\udbff"


def _fix_surrogates(s: str) -> str:
    try:
        return s.encode("utf-16", "surrogatepass").decode("utf-16")
    except UnicodeDecodeError:
        return s.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _copy(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _copy(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_copy(x) for x in v]
    return v


@dataclass
class ActionStreamParser:
    """Feed text chunks; get `ParsedAction` events (partials, then the complete action)."""

    state: int = _PROSE
    chars: int = 0
    _stack: list[_Frame] = field(default_factory=list)
    _actions_depth: int = -1  # stack index of the actions array
    _action_index: int = -1
    _action_start: int = 0
    _last_snapshot: int = 0
    _str: list[str] = field(default_factory=list)
    _str_is_key: bool = False
    _esc: str | None = None  # pending escape text after a backslash
    _token: list[str] = field(default_factory=list)
    _maybe: str = ""
    _look: str = ""  # text held in _FIRST until it shows an action or a restart
    _seen_actions: bool = False  # an actions array was found (later JSON is trailing noise)
    _bare: bool = False  # the actions array is a bare top-level array (not `{"actions": [`)
    _pending: list[str] = field(default_factory=list)  # notes held until the array is real
    _notes: list[str] = field(default_factory=list)
    _dirty: bool = False
    count: int = 0  # complete actions so far

    # -- public ------------------------------------------------------------------------
    def feed(self, chunk: str) -> list[ParsedAction]:
        out: list[ParsedAction] = []
        self._run(chunk, out)
        self.chars += len(chunk)
        if self._dirty and self._in_action():
            grown = self.chars - self._last_snapshot
            size = self._last_snapshot - self._action_start
            if grown >= max(_MIN_GROWTH, int(size * _GROWTH)):
                snap = self._snapshot()
                if snap is not None:
                    out.append(snap)
                self._last_snapshot = self.chars
                self._dirty = False
        return out

    def finish(self) -> list[ParsedAction]:
        """End of stream: a number token may complete; an open action is reported truncated."""
        out: list[ParsedAction] = []
        if self.state == _TOKEN:
            self._end_token(out)
        if self._in_action():
            snap = self._snapshot()
            if snap is not None:
                snap.truncated = True
                out.append(snap)
        if self._actions_depth >= 0 and not self._bare:
            self._notes.extend(self._pending)
        self._pending = []
        self.state = _DONE
        return out

    @property
    def done(self) -> bool:
        return self.state == _DONE

    def take_notes(self) -> list[str]:
        """Notes for the model about entries skipped since the last call."""
        notes, self._notes = self._notes, []
        return notes

    # -- internals ---------------------------------------------------------------------
    def _in_action(self) -> bool:
        return self._actions_depth >= 0 and len(self._stack) > self._actions_depth + 1

    def _snapshot(self) -> ParsedAction | None:
        depth = self._actions_depth + 1
        root = self._stack[depth].container
        if not isinstance(root, dict):
            return None
        data = _copy(root)
        path: list[str | int] = []
        node: Any = data
        for frame in self._stack[depth + 1 :]:
            if frame.detached:
                node = None
                break
            path.append(frame.slot)
            node = node[frame.slot]
        incomplete: tuple[str | int, ...] | None = None
        if self.state == _STRING and not self._str_is_key and node is not None:
            text = "".join(self._str)
            if text and _is_high_surrogate(text[-1]):
                text = text[:-1]  # its other half is still on the way
            text = _fix_surrogates(text)
            last = self._stack[-1]
            if isinstance(node, dict) and last.key is not None:
                node[last.key] = text
                incomplete = (*path, last.key)
            elif isinstance(node, list):
                node.append(text)
                incomplete = (*path, len(node) - 1)
        return ParsedAction(self._action_index, data, False, incomplete)

    def _attach(self, value: Any) -> None:
        if not self._stack:
            return
        top = self._stack[-1]
        if isinstance(top.container, dict):
            if top.key is not None:
                top.container[top.key] = value
                top.key = None
        else:
            top.container.append(value)

    def _open(self, container: dict[str, Any] | list[Any], out: list[ParsedAction]) -> None:
        depth = len(self._stack)
        is_actions = False
        if isinstance(container, list):
            if depth == 0:
                is_actions = True
            elif depth == 1 and self._actions_depth < 0:
                top = self._stack[0]
                is_actions = isinstance(top.container, dict) and top.key == "actions"
        parent_is_actions = self._actions_depth >= 0 and depth == self._actions_depth + 1
        slot: str | int = ""
        if self._stack:
            top = self._stack[-1]
            if isinstance(top.container, dict):
                slot = top.key or ""
            else:
                slot = len(top.container)
        detached = depth >= MAX_DEPTH or bool(self._stack and self._stack[-1].detached)
        self._attach(None if detached else container)
        self._stack.append(_Frame(container, slot=slot, detached=detached))
        self.state = _KEY if isinstance(container, dict) else _VALUE
        if is_actions:
            self._actions_depth = depth
            self._seen_actions = True
            self._bare = depth == 0
            if self._action_index < 0:
                self.state = _FIRST
        if parent_is_actions and isinstance(container, dict):
            self._notes.extend(self._pending)
            self._pending = []
            self._action_index += 1
            self._action_start = self.chars
            self._last_snapshot = self.chars

    def _close(self, out: list[ParsedAction]) -> None:
        frame = self._stack.pop()
        depth = len(self._stack)
        if self._actions_depth >= 0 and depth == self._actions_depth + 1:
            if isinstance(frame.container, dict):
                self.count += 1
                out.append(ParsedAction(self._action_index, frame.container, True))
                self._dirty = False
            else:
                self._skipped(frame.container, attached=True)
        if depth == self._actions_depth:
            self._actions_depth = -1
            if not self._bare or self._action_index >= 0:
                self._notes.extend(self._pending)
            self._pending = []
        if self._stack:
            self.state = _AFTER
        elif self._seen_actions and self._action_index >= 0:
            self.state = _DONE
        else:
            # A JSON object before the real answer, or an array of no action (a `[]` in
            # prose, an empty actions array), is skipped like prose.
            self._seen_actions = False
            self.state = _PROSE

    def _skipped(self, value: Any, *, attached: bool = False) -> None:
        """An entry of the actions array that is not an action object."""
        position = len(self._stack[self._actions_depth].container) - int(attached)
        self._pending.append(
            f"entry {position} of the actions array is {_kind_of(value)}, not an action "
            "object; it was skipped"
        )

    def _end_value(self, value: Any) -> None:
        if self._actions_depth >= 0 and len(self._stack) == self._actions_depth + 1:
            self._skipped(value)
        self._attach(value)
        self.state = _AFTER if self._stack else _DONE
        self._dirty = True

    def _first(self, c: str, out: list[ParsedAction]) -> None:
        """Look ahead at the start of the actions array, one character at a time.

        `{` then a key other than "actions" (or `]`) is the array's content; `{"actions"`
        is the opening repeated, and anything else is prose: both restart from prose, so
        the held text is read again from there.
        """
        if c in _WS and self._look in ("", "{"):
            return
        look = self._look + c
        if look == "]" or (look[0] == "{" and not _OPENING_KEY.startswith(look[1:])):
            self._look = ""
            self.state = _VALUE
            self._run(look, out)
            return
        if look[0] == "{" and look[1:] != _OPENING_KEY:
            self._look = look  # still a prefix of the opening: wait for more
            return
        if look[0] != "{" and len(look) <= _MAX_LOOK:
            # A value that is not an object: an entry to skip when a comma or the array's
            # end follows it, else the first word of prose.
            ends = len(look) == 1 or c in '"]}' or c in _DELIMS
            verdict = self._entry_or_prose(look) if ends else None
            if verdict is None:
                self._look = look
                return
            if verdict:
                self._look = ""
                self.state = _VALUE
                self._run(look, out)
                return
        self._look = ""
        self._stack.clear()
        self._actions_depth = -1
        self._seen_actions = False
        self.state = _PROSE
        self._run(look, out)

    @staticmethod
    def _entry_or_prose(look: str) -> bool | None:
        """True: `look` opens with a JSON value then `,` or `]`; False: prose; None: wait."""
        if look[0] not in '"[-0123456789' and not look[0].isalpha():
            return False
        end = _value_end(look)
        if end is None:
            return None
        if end < 0:
            return False
        rest = look[end:].lstrip(_WS)
        if not rest:
            return None
        return rest[0] in ",]"

    def _end_token(self, out: list[ParsedAction]) -> None:
        raw = "".join(self._token)
        self._token = []
        try:
            value: Any = json.loads(raw)
        except ValueError:
            value = raw  # e.g. a bare word; the sanitizer coerces or drops it
        self._end_value(value)

    def _run(self, s: str, out: list[ParsedAction]) -> None:
        i, n = 0, len(s)
        while i < n:
            st = self.state
            if st == _DONE:
                return
            if st == _STRING:
                if self._esc is not None:
                    i = self._escape(s, i)
                    continue
                q = s.find('"', i)
                b = s.find("\\", i)
                if b != -1 and (q == -1 or b < q):
                    self._str.append(s[i:b])
                    self._esc = ""
                    i = b + 1
                    continue
                if q == -1:
                    self._str.append(s[i:])
                    self._dirty = True
                    return
                self._str.append(s[i:q])
                text = _fix_surrogates("".join(self._str))
                self._str = []
                i = q + 1
                if self._str_is_key:
                    top = self._stack[-1]
                    top.key = text
                    self.state = _COLON
                else:
                    self._end_value(text)
                continue
            c = s[i]
            if st == _TOKEN:
                if c in _DELIMS:
                    self._end_token(out)
                    continue  # re-read the delimiter in _AFTER
                self._token.append(c)
                i += 1
                continue
            if st == _FIRST:
                self._first(c, out)
                i += 1
                continue
            if c in _WS:
                i += 1
                continue
            if st == _PROSE:
                if c in "{[":
                    self._maybe = c
                    self.state = _MAYBE
                i += 1
                continue
            if st == _MAYBE:
                opener = self._maybe
                if (opener == "{" and c in '"}') or (opener == "[" and c in "{]"):
                    self._open({} if opener == "{" else [], out)
                    continue
                self.state = _PROSE
                continue
            if st == _VALUE:
                if c == "{":
                    self._open({}, out)
                elif c == "[":
                    self._open([], out)
                elif c == '"':
                    self._str_is_key = False
                    self.state = _STRING
                elif c == "]" and isinstance(self._stack[-1].container, list):
                    self._close(out)
                else:
                    self._token = [c]
                    self.state = _TOKEN
                i += 1
                continue
            if st == _KEY:
                if c == '"':
                    self._str_is_key = True
                    self.state = _STRING
                elif c == "}":
                    self._close(out)
                i += 1  # anything else (a stray comma) is skipped
                continue
            if st == _COLON:
                if c == ":":
                    self.state = _VALUE
                i += 1
                continue
            # _AFTER: a value ended
            top = self._stack[-1]
            if c == ",":
                self.state = _KEY if isinstance(top.container, dict) else _VALUE
            elif c in "}]":
                self._close(out)
            elif c == "{" and len(self._stack) == self._actions_depth + 1:
                self.state = _VALUE  # the next action, its comma forgotten
                continue
            i += 1

    def _escape(self, s: str, i: int) -> int:
        esc = (self._esc or "") + s[i]
        i += 1
        if esc[0] == "u":
            if len(esc) < 5:
                self._esc = esc
                return i
            try:
                self._str.append(chr(int(esc[1:5], 16)))
            except ValueError:
                self._str.append(esc[1:5])
        else:
            self._str.append(_ESCAPES.get(esc[0], esc[0]))
        self._esc = None
        return i


def parse_all(text: str) -> list[dict[str, Any]]:
    """The complete actions of a whole response (convenience for tests and replay)."""
    parser = ActionStreamParser()
    events = parser.feed(text) + parser.finish()
    return [e.data for e in events if e.complete]
