"""The kit's guidance: every action and prompt part carries its system-prompt section, each
mode's prompt holds exactly its own sections, and docs/PROMPT.md names sections that exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from steward.actions.base import ActionSpec
from steward.actions.registry import ACTIONS
from steward.fairies.modes import MODES
from steward.prompt.registry import PARTS
from steward.prompt.system_prompt import flow, system_prompt

SPECS: dict[str, ActionSpec] = ACTIONS
# Nothing to teach: `unknown` is never to be chosen; the time states itself in the request.
EXEMPT_ACTIONS = {"unknown"}
EXEMPT_PARTS = {"time"}
DOC = Path(__file__).resolve().parents[2] / "docs" / "PROMPT.md"


SECTIONS = [("action", n) for n in sorted(SPECS)] + [("part", n) for n in sorted(PARTS)]


@pytest.mark.parametrize(("kind", "name"), SECTIONS)
def test_every_action_and_part_carries_a_guide(kind: str, name: str) -> None:
    guide, described = (
        (SPECS[name].guide, SPECS[name].description)
        if kind == "action"
        else (PARTS[name].guide, PARTS[name].title or name == "system")
    )
    if name in (EXEMPT_ACTIONS if kind == "action" else EXEMPT_PARTS):
        assert not guide
        return
    assert len(guide.split()) >= 8, f"{kind} {name}: its guide teaches too little"
    # An action's guide says more than its schema description; a part's has a heading
    # (the opening `system` section needs none).
    assert described and guide.strip() != str(described).strip()


@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_modes_prompt_holds_exactly_its_sections(mode: str) -> None:
    m = MODES[mode]  # type: ignore[index]
    text = system_prompt(m.actions, [PARTS[p] for p in m.parts], m.name)
    for name, spec in ACTIONS.items():
        if spec.guide:
            assert (f"### `{name}`\n{flow(spec.guide)}" in text) == (name in m.actions), name
    for name, part in PARTS.items():
        if part.guide:
            assert (flow(part.guide) in text) == (name in m.parts), name


def test_the_rules_table_names_sections_that_exist() -> None:
    rows = re.findall(r"^\| (\d+) \| [^|]+ \| ([^|]+) \|", DOC.read_text(), flags=re.M)
    assert len(rows) >= 60
    assert [int(n) for n, _ in rows] == list(range(1, len(rows) + 1))
    for number, section in rows:
        kind, _, name = section.strip().partition(":")
        if kind == "dropped":
            continue
        assert kind in ("part", "action"), f"rule {number}: {section!r}"
        assert name in (PARTS if kind == "part" else SPECS), f"rule {number}: no {section}"
        carrier = PARTS[name].guide if kind == "part" else SPECS[name].guide
        assert carrier or name in EXEMPT_PARTS, f"rule {number}: {section} has no guide"


def test_guides_flow_into_one_line_per_paragraph_or_bullet() -> None:
    assert flow("Intro that\nwraps.\n- a bullet\n  that wraps\n\nNext\nparagraph") == (
        "Intro that wraps.\n- a bullet that wraps\n\nNext paragraph"
    )


@pytest.mark.parametrize("mode", sorted(m for m in MODES if MODES[m].generates))  # type: ignore[index]
def test_a_modes_prompt_names_only_actions_it_has(mode: str) -> None:
    """Every backticked action name in a role's system prompt is one of that role's actions
    (a lead read "see `create` for centred text" and has no `create`); so is every action
    name written out in full (kebab-case or camelCase, never a plain word)."""
    m = MODES[mode]  # type: ignore[index]
    text = system_prompt(m.actions, [PARTS[p] for p in m.parts], m.name)
    prose = text.split("## Response JSON schema")[0]
    ticked = {t for t in re.findall(r"`([^`\s]+)`", prose) if t in ACTIONS}
    assert ticked <= set(m.actions), sorted(ticked - set(m.actions))
    spelled = {
        a
        for a in ACTIONS
        if (a != a.lower() or "-" in a) and re.search(rf"(?<![\w-]){re.escape(a)}(?![\w-])", prose)
    }
    assert spelled <= set(m.actions), sorted(spelled - set(m.actions))
