"""The scripted model, taught to run whole fairy projects (same response format).

It reads the fairy facts the runtime puts in `hints["fairy"]` (mode, project, tasks, the
shapes already in its area) and answers as a careful model would:
- an orchestrator with no project starts one, plans one task per drone side by side in free
  space near the asker's view (neighbouring areas overlap a little), each task one thing
  that belongs to the subject ("a farm": the barn, the tree), directs every drone and
  awaits them all;
- a duo orchestrator plans two tasks, directs its partner to one and works the other itself;
- woken by a finished task, it reviews, and awaits the rest or ends the project;
- a solo fairy plans two tasks of its own and works them one after the other;
- a drone draws what its task's title names inside its task area (a framed picture and the
  title), skipping shapes that already exist (so a resumed turn does not draw twice), then
  marks its task done.
Everything else falls back to the plain scripted model.
"""

from __future__ import annotations

from typing import Any

from steward.canvas.bounds import text_extent
from steward.model.scripted.model import ScriptedModel, ScriptedTurn
from steward.model.scripted.pictures import picture_for, scene_for
from steward.model.scripted.reading import read
from steward.model.scripted.request import FONT
from steward.model.scripted.seen import seen_shapes
from steward.protocol.box import Box

# Neighbouring task areas share this many pixels: parallel drones meet but do not collide.
TASK_OVERLAP = 40
# One task's area; a drone keeps INSET clear inside it, so neighbours' drawings never meet.
AREA_W, AREA_H = 360, 340
INSET = TASK_OVERLAP // 2 + 10
_PALETTE = ("blue", "green", "orange", "violet", "red")


def _subject(message: str) -> str:
    r = read(message)
    return (r.subject or r.text).strip().rstrip(".!")[:60] or "a scene"


def task_titles(subject: str, n: int) -> list[str]:
    """n parts of the subject, each something a drone can draw: a farm's barn, tree, field."""
    scene = scene_for(subject)
    if scene is not None:
        names = [p.name for p in scene[1]]
        return [f"The {names[i % len(names)]}" for i in range(n)]
    sides = ["Left part", "Right part"] + [f"Detail {i}" for i in range(3, n + 1)]
    return [f"{side} of {subject}" for side in sides[:n]]


def plan_areas(
    view: dict[str, float], n: int, canvas: list[Any] | None = None, message: str = ""
) -> list[dict[str, int]]:
    """n task areas side by side, each overlapping its neighbour, in free space inside the
    viewport (beside what the message names, e.g. "below the flow chart") when it has room."""
    n = max(n, 1)
    turn = ScriptedTurn({"message": message, "viewport": view, "canvas": canvas or []})
    box, _ = turn.place(n * AREA_W - (n - 1) * TASK_OVERLAP, AREA_H)
    return [
        {"x": int(box.x) + i * (AREA_W - TASK_OVERLAP), "y": int(box.y), "w": AREA_W, "h": AREA_H}
        for i in range(n)
    ]


def drone_drawing(task: dict[str, Any]) -> list[dict[str, Any]]:
    """The shapes a drone draws for its task: a frame inside the task's area holding a
    picture of what the title names (when it is one it knows) and the title under it."""
    b = task["bounds"]
    tid = str(task["id"])
    title = str(task.get("title") or tid)
    frame = Box(b["x"] + INSET, b["y"] + INSET, b["w"] - 2 * INSET, b["h"] - 2 * INSET)
    color = _PALETTE[sum(map(ord, tid)) % len(_PALETTE)]
    turn = ScriptedTurn({"message": title, "viewport": b, "canvas": []})
    turn.n = 0  # notes say what each shape is for; drones' ids come from the task
    max_chars = max(int((frame.w - 40) // (0.6 * FONT)), 4)
    label = title if len(title) <= max_chars else title[: max_chars - 1] + "…"
    _, text_h = text_extent(label, FONT)
    shapes: list[dict[str, Any]] = [
        {
            "_type": "rectangle",
            "shapeId": f"{tid}-frame",
            "x": int(frame.x),
            "y": int(frame.y),
            "w": int(frame.w),
            "h": int(frame.h),
            "color": color,
            "fill": "none",
            "note": f"task {tid}: {title}",
        },
    ]
    scene = scene_for(title)
    pic = picture_for(title) or (scene[1][0] if scene else None)
    if pic is not None:
        art = Box(frame.x + 20, frame.y + 20, frame.w - 40, frame.h - 50 - text_h)
        shapes += [a["shape"] for a in turn.picture(pic, art, tid)]
    shapes.append(
        {
            "_type": "text",
            "shapeId": f"{tid}-label",
            "x": int(frame.x + 20),
            "y": int(frame.max_y - 20 - text_h),
            "text": label,
            "color": "black",
            "note": f"task {tid}: {title}",
        }
    )
    return shapes


def fresh_ids(prefix: str, n: int, taken: object) -> list[str]:
    """`n` task ids `prefix-1`, `prefix-2`, … that no task of the room has yet (a room's
    task ids are one namespace across its projects)."""
    used = set(taken) if isinstance(taken, list) else set()
    out: list[str] = []
    k = 1
    while len(out) < n:
        tid = f"{prefix}-{k}"
        if tid not in used:
            out.append(tid)
        k += 1
    return out


class ScriptedProjectModel(ScriptedModel):
    """The scripted model that also plays orchestrators and drones, from the fairy facts in its
    hints."""

    def actions_for(self, hints: dict[str, Any]) -> list[dict[str, Any]]:
        fairy = hints.get("fairy")
        if not isinstance(fairy, dict):
            return super().actions_for(hints)
        mode = fairy.get("mode")
        if mode in ("orchestrating-active", "duo-orchestrating-active"):
            return self._orchestrate(fairy)
        if mode in ("working-drone", "working-orchestrator"):
            return self._work(
                fairy, "mark-my-task-done" if mode == "working-drone" else "mark-duo-task-done"
            )
        if mode == "working-solo":
            return self._work(fairy, "mark-task-done")
        if mode == "soloing":
            return self._solo(fairy)
        if mode == "standing-by":
            return [{"_type": "message", "text": "Standing by for the next task."}]
        return super().actions_for(hints)

    def _orchestrate(self, f: dict[str, Any]) -> list[dict[str, Any]]:
        project = f.get("project")
        tasks: list[dict[str, Any]] = list(f.get("tasks") or [])
        duo = f.get("mode") == "duo-orchestrating-active"
        if not project:
            members: list[str] = list(f.get("free_drones") or [])[:3]
            if not members:
                return [{"_type": "message", "text": "No fairy is free to help right now."}]
            message = str(f.get("message") or "")
            subject = _subject(message)
            areas = plan_areas(
                f.get("viewport") or {"x": 0, "y": 0, "w": 1600, "h": 900},
                max(len(members), 2),
                seen_shapes(f.get("canvas")),
                message,
            )
            parts = task_titles(subject, len(areas))
            acts: list[dict[str, Any]] = [
                {
                    "_type": "think",
                    "text": f"{len(areas)} side-by-side areas, one per drone, "
                    f"overlapping by {TASK_OVERLAP}px so the halves meet.",
                },
                {
                    "_type": "start-duo-project" if duo else "start-project",
                    "title": subject.capitalize(),
                    "description": f"Draw {subject}.",
                    "plan": "; ".join(f"task {i + 1}: {p}" for i, p in enumerate(parts))
                    + ". All tasks run in parallel; then I review and end.",
                },
            ]
            # A duo is the lead and one partner: the partner gets part 1, the lead part 2.
            crew = [members[0], str(f.get("fairy_id"))] if duo else members
            ids = fresh_ids("part", len(areas), f.get("room_task_ids"))
            for i, (area, part) in enumerate(zip(areas, parts, strict=False)):
                tid = ids[i]
                acts.append(
                    {
                        "_type": "create-duo-task" if duo else "create-project-task",
                        "taskId": tid,
                        "title": part,
                        "text": f"Draw {part.lower()} inside your area.",
                        **area,
                        "assignee": crew[i % len(crew)],
                    }
                )
            mine = [tid for i, tid in enumerate(ids) if crew[i % len(crew)] == f.get("fairy_id")]
            for tid in ids:
                if tid not in mine:
                    acts.append(
                        {
                            "_type": "direct-to-start-duo-task"
                            if duo
                            else "direct-to-start-project-task",
                            "taskId": tid,
                        }
                    )
            if mine:  # duo: work my own part now; review and await after it
                acts.append({"_type": "start-duo-task", "taskId": mine[0]})
                return acts
            acts.append(
                {
                    "_type": "await-duo-tasks-completion" if duo else "await-tasks-completion",
                    "taskIds": ids,
                }
            )
            return acts
        done = [t for t in tasks if t["status"] == "done"]
        running = [t for t in tasks if t["status"] == "in-progress"]
        todo = [t for t in tasks if t["status"] == "todo"]
        acts = [
            {
                "_type": "think",
                "text": "Reviewing: "
                + (", ".join(f"{t['id']} is done" for t in done) or "nothing finished yet")
                + ".",
            }
        ]
        me = f.get("fairy_id")
        for t in todo:
            if t.get("assigned_to") != me:
                acts.append(
                    {
                        "_type": "direct-to-start-duo-task"
                        if duo
                        else "direct-to-start-project-task",
                        "taskId": t["id"],
                    }
                )
        own_todo = [t for t in todo if duo and t.get("assigned_to") == me]
        if own_todo:
            acts.append({"_type": "start-duo-task", "taskId": own_todo[0]["id"]})
            return acts
        if running or todo:
            acts.append(
                {
                    "_type": "await-duo-tasks-completion" if duo else "await-tasks-completion",
                    "taskIds": [t["id"] for t in running + todo],
                }
            )
            return acts
        acts.append(
            {
                "_type": "message",
                "text": f"The project is complete: {len(done)} tasks drawn and reviewed.",
            }
        )
        acts.append({"_type": "end-duo-project" if duo else "end-project"})
        return acts

    def _solo(self, f: dict[str, Any]) -> list[dict[str, Any]]:
        own: list[dict[str, Any]] = list(f.get("own_tasks") or [])
        acts: list[dict[str, Any]] = []
        if not own:
            message = str(f.get("message") or "")
            subject = _subject(message)
            areas = plan_areas(
                f.get("viewport") or {"x": 0, "y": 0, "w": 1600, "h": 900},
                2,
                seen_shapes(f.get("canvas")),
                message,
            )
            acts.append({"_type": "think", "text": f"Two parts for {subject}, one at a time."})
            ids = fresh_ids("solo", 2, f.get("room_task_ids"))
            for tid, area, title in zip(ids, areas, task_titles(subject, 2), strict=True):
                own.append({"id": tid, "status": "todo"})
                acts.append(
                    {
                        "_type": "create-task",
                        "taskId": tid,
                        "title": title,
                        "text": f"Draw {title.lower()}.",
                        **area,
                    }
                )
        todo = [t for t in own if t.get("status") == "todo"]
        if todo:
            acts.append({"_type": "start-task", "taskId": todo[0]["id"]})
        else:
            acts.append({"_type": "message", "text": f"Done: {len(own)} tasks drawn."})
        return acts

    def _work(self, f: dict[str, Any], done_action: str) -> list[dict[str, Any]]:
        task = f.get("task")
        if not isinstance(task, dict) or not task.get("bounds"):
            return [{"_type": done_action}]
        have = set(f.get("existing_ids") or [])
        acts: list[dict[str, Any]] = [
            {"_type": "think", "text": f"Drawing {task.get('title')} inside my area."}
        ]
        for s in drone_drawing(task):
            if s["shapeId"] not in have:
                acts.append({"_type": "create", "intent": f"Draw {s['shapeId']}", "shape": s})
        acts.append({"_type": done_action})
        return acts
