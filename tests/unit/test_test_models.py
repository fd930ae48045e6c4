"""The test models of the local Messages server: they read only the request, answer from
its schema, refer to shapes they were shown and stay inside the bounds they were given."""

from __future__ import annotations

import json
import random
from typing import Any

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from steward.actions.registry import ALL_ACTION_NAMES
from steward.canvas.coords import CoordinateSpace
from steward.fairies.modes import MODES
from steward.model.anthropic_model import AnthropicModel
from steward.model.base import PREFILL
from steward.prompt.registry import build_request
from steward.prompt.response_schema import response_schema
from steward.prompt.state import PromptState
from steward.protocol.box import Box
from steward_tools.rigs.request_text import json_values, read_request
from steward_tools.rigs.responders import (
    PlanResponder,
    SchemaResponder,
    continuation,
    random_chunks,
)
from steward_tools.rigs.schema_sampler import Knowledge, SchemaSampler

JPEG = b"\xff\xd8\xff\xe0jpeg"
SCHEMA = response_schema(ALL_ACTION_NAMES)
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)  # built once: validate() re-checks the schema


def one_shot_body(screenshot: bytes | None = JPEG) -> dict[str, Any]:
    """A request exactly as the provider sends it for the one-shot agent."""
    shapes = {
        "a": {
            "id": "a",
            "type": "geo",
            "x": 150,
            "y": 130,
            "rotation": 0,
            "props": {"geo": "rectangle", "w": 100, "h": 50, "text": "Hi"},
        },
        "b": {
            "id": "b",
            "type": "geo",
            "x": 400,
            "y": 300,
            "rotation": 0,
            "props": {"geo": "ellipse", "w": 80, "h": 80},
        },
        "far": {
            "id": "far",
            "type": "geo",
            "x": 9000,
            "y": 9000,
            "rotation": 0,
            "props": {"geo": "rectangle", "w": 10, "h": 10},
        },
    }
    mode = MODES["one-shotting"]
    state = PromptState(
        message="tidy up",
        shapes=shapes,
        viewport=Box(100, 100, 800, 600),
        coords=CoordinateSpace(100, 100),
        enabled_actions=mode.actions,
        selection=["a"],
        screenshot=screenshot,
        user_viewport=Box(0, 0, 300, 300),
    )
    request = build_request(state, mode)
    return AnthropicModel("x", api_key="k").build_params(request)


def test_reads_schema_shapes_bounds_screenshot_and_prefill_of_a_real_request() -> None:
    view = read_request(one_shot_body())
    assert view.schema is not None and "create" in view.action_names
    assert set(view.shapes) == {"a", "b"}  # the far shape is only a cluster
    assert view.bounds == Box(0, 0, 800, 600)  # the agent's viewport, model coordinates
    assert view.has_screenshot and view.prefill == PREFILL
    assert view.mode is not None
    assert not read_request(one_shot_body(screenshot=None)).has_screenshot


def test_reads_task_area_tasks_and_fairies_from_fairy_text() -> None:
    text = "\n".join(
        [
            "Other fairies in this room:",
            "- lead (Ada, orchestrator): orchestrating-waiting at (0, 0)",
            "- d2 (Bo, drone): idling at (10, 10)",
            'Your project "Farm" (active): a farm',
            'You are working on: [part1] "Part 1" (in-progress, assigned to d1) '
            "bounds=(x=10, y=20, w=300, h=200): draw",
            "You can only see and edit inside your task area (x=10, y=20, w=300, h=200).",
            "Your view: x=0, y=0, w=1600, h=900.",
        ]
    )
    user = {"role": "user", "content": [{"type": "text", "text": text}]}
    body = {
        "system": [{"type": "text", "text": "Your mode is working-drone."}],
        "messages": [user],
    }
    view = read_request(body)
    assert view.mode == "working-drone" and view.schema is None
    assert view.bounds == Box(10, 20, 300, 200)  # the task area wins over the view
    assert view.fairies == {"lead": "orchestrator", "d2": "drone"}
    assert view.fairy_modes == {"lead": "orchestrating-waiting", "d2": "idling"}
    assert view.project_status == "active" and view.free is None
    (task,) = view.tasks
    assert (task.id, task.status, task.assigned_to) == ("part1", "in-progress", "d1")
    assert task.bounds == Box(10, 20, 300, 200)


def test_json_values_finds_json_after_labels_and_skips_broken_text() -> None:
    found = [v for _, v in json_values('a {oops} b: {"x": 1} [1, 2]\n{"y": [}\n[{"z": 0}]')]
    assert found == [{"x": 1}, [1, 2], [{"z": 0}]]


def inside(box: Box, x: float, y: float) -> bool:
    return box.x <= x <= box.x + box.w and box.y <= y <= box.y + box.h


def check_action(action: dict[str, Any], know: Knowledge, created: set[str]) -> None:
    refs = [action.get(k) for k in ("shapeId", "referenceShapeId")]
    refs += list(action.get("shapeIds") or [])
    if isinstance(action.get("update"), dict):
        refs.append(action["update"].get("shapeId"))
    for ref in (r for r in refs if r is not None):
        assert ref in know.shape_ids or ref in created
    shape = action.get("shape") or {}
    for key_x, key_y in (("x", "y"), ("x1", "y1"), ("x2", "y2")):
        for node in (action, shape):
            if key_x in node and key_y in node and node is not action.get("update"):
                assert inside(know.bounds, node[key_x], node[key_y]), (node, know.bounds)
    for p in action.get("points") or []:
        assert inside(know.bounds, p["x"], p["y"])


# A plain seeded Random: hypothesis's own (shrinkable) Random is ~100x slower to draw from.
@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    ids=st.lists(st.sampled_from(["a", "b", "c", "d"]), unique=True),
    box=st.tuples(
        st.integers(-500, 500), st.integers(-500, 500), st.integers(50, 2000), st.integers(50, 2000)
    ),
)
def test_sampled_actions_are_schema_valid_use_shown_ids_and_stay_in_bounds(
    seed: int, ids: list[str], box: tuple[int, int, int, int]
) -> None:
    know = Knowledge(shape_ids=ids, bounds=Box(*box))
    sampler = SchemaSampler(SCHEMA, random.Random(seed), know)
    items = SCHEMA["properties"]["actions"]["items"]
    actions = [sampler.value(items, "action") for _ in range(5)]
    VALIDATOR.validate({"actions": actions})
    for action in actions:
        check_action(action, know, set(know.created))


def test_schema_responder_continues_the_prefill_in_random_chunks_deterministically() -> None:
    body = one_shot_body()
    first, again = SchemaResponder(seed=3), SchemaResponder(seed=3)
    reply = first(body)
    assert reply.chunks == again(body).chunks  # a seed reproduces the answer
    text = PREFILL + reply.text
    parsed = json.loads(text)
    VALIDATOR.validate(parsed)
    assert parsed["actions"] == first.answered[0].actions and parsed["actions"]
    assert len(reply.chunks) > 1
    other = SchemaResponder(seed=4)(body)
    assert other.chunks != reply.chunks


def test_schema_responder_says_nothing_without_a_schema() -> None:
    body = {
        "system": "hi",
        "messages": [
            {"role": "user", "content": "draw"},
            {"role": "assistant", "content": PREFILL},
        ],
    }
    responder = SchemaResponder()
    assert json.loads(PREFILL + responder(body).text) == {"actions": []}


def test_random_chunks_cover_the_text() -> None:
    rng = random.Random(1)
    text = "x" * 1000
    chunks = random_chunks(text, rng)
    assert "".join(chunks) == text and min(map(len, chunks)) >= 1
    assert continuation("", [{"_type": "think"}]) == '{"actions": [{"_type": "think"}]}'


def fairy_body(names: list[str], text: str) -> dict[str, Any]:
    variants = [{"properties": {"_type": {"const": n}}} for n in names]
    schema = {"properties": {"actions": {"items": {"anyOf": variants}}}}
    system = f"Your mode is x.\n## Response JSON schema\n{json.dumps(schema)}"
    return {
        "system": [{"type": "text", "text": system}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": text}]},
            {"role": "assistant", "content": PREFILL},
        ],
    }


ORCH = [
    "start-project",
    "create-project-task",
    "direct-to-start-project-task",
    "await-tasks-completion",
    "end-project",
    "message",
    "think",
]


def test_plan_responder_plans_for_the_drones_it_was_told_about_then_ends() -> None:
    plan = PlanResponder()
    text = (
        "Other fairies in this room:\n- d1 (Bo, drone): idling at (0, 0)\n"
        "- d2 (Cy, drone): idling at (0, 0)\nYour view: x=0, y=0, w=1000, h=500."
    )
    actions = json.loads(PREFILL + plan(fairy_body(ORCH, text)).text)["actions"]
    kinds = [a["_type"] for a in actions]
    assert kinds[0] == "start-project" and kinds[-1] == "await-tasks-completion"
    tasks = [a for a in actions if a["_type"] == "create-project-task"]
    assert [t["assignee"] for t in tasks] == ["d1", "d2"]
    assert len({t["taskId"] for t in tasks}) == 2
    for t in tasks:  # side by side, inside the view
        assert 0 <= t["x"] and t["x"] + t["w"] <= 1000 and t["y"] + t["h"] <= 500
    assert tasks[0]["x"] + tasks[0]["w"] < tasks[1]["x"]
    waiting = (
        text + '\nTasks:\n- [part1] "P" (done, assigned to d1)\n'
        '- [part2] "Q" (in-progress, assigned to d2)'
    )
    again = json.loads(PREFILL + plan(fairy_body(ORCH, waiting)).text)["actions"]
    assert [a["_type"] for a in again] == ["await-tasks-completion"]
    finished = waiting.replace("in-progress", "done")
    last = json.loads(PREFILL + plan(fairy_body(ORCH, finished)).text)["actions"]
    assert [a["_type"] for a in last][-1] == "end-project"


def test_plan_responder_drone_draws_inside_its_task_and_marks_it_done() -> None:
    area = "x=500, y=40, w=300, h=200"
    text = (
        f'You are working on: [part2] "Q" (in-progress, assigned to d2) bounds=({area}): '
        f"draw\nYou can only see and edit inside your task area ({area})."
    )
    body = fairy_body(["create", "message", "mark-my-task-done"], text)
    actions = json.loads(PREFILL + PlanResponder(chunk=5)(body).text)["actions"]
    shape = actions[0]["shape"]
    assert 500 <= shape["x"] and shape["x"] + shape["w"] <= 800
    assert 40 <= shape["y"] and shape["y"] + shape["h"] <= 240
    assert actions[-1] == {"_type": "mark-my-task-done", "taskId": "part2"}


def test_plan_responder_uses_the_free_fairies_and_does_not_restart_its_project() -> None:
    plan = PlanResponder(seed=2)
    roster = "- d1 (Bo, drone): standing-by at (0, 0)\n- d2 (Cy, drone): idling at (0, 0)"
    text = "You have no project yet. Fairies free to help: d2\n" + roster
    first = json.loads(PREFILL + plan(fairy_body(ORCH, text)).text)["actions"]
    assert [a["assignee"] for a in first if "assignee" in a] == ["d2"]
    # Its project started but the tasks were refused: it plans tasks again, with new ids.
    again = json.loads(
        PREFILL
        + plan(
            fairy_body(ORCH, 'Your project "P" (active): x\n- d2 (Cy, drone): idling at (0, 0)')
        ).text
    )
    kinds = [a["_type"] for a in again["actions"]]
    assert "start-project" not in kinds and "create-project-task" in kinds
    ids = {a["taskId"] for a in first + again["actions"] if a["_type"] == "create-project-task"}
    assert len(ids) == 2
