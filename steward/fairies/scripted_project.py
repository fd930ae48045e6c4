"""The scripted model, taught to run whole fairy projects (same response format).

It reads the fairy facts the runtime puts in `hints["fairy"]` (mode, project, tasks, the
shapes already in its area) and answers as a careful model would:
- an orchestrator with no project starts one, plans one task per drone side by side
  (neighbouring areas overlap a little), directs every drone and awaits them all;
- a duo orchestrator plans two tasks, directs its partner to one and works the other itself;
- woken by a finished task, it reviews, and awaits the rest or ends the project;
- a solo fairy plans two tasks of its own and works them one after the other;
- a drone draws a small scene inside its task area, skipping shapes that already exist (so a
  resumed turn does not draw twice), then marks its task done.
Everything else falls back to the plain scripted model.
"""

from __future__ import annotations

import re
from typing import Any

from steward.model.scripted import ScriptedModel, below_content

# Neighbouring task areas share this many pixels: parallel drones meet but do not collide.
TASK_OVERLAP = 40
_PALETTE = ("blue", "green", "orange", "violet", "red")


def _subject(message: str) -> str:
    m = re.search(r"\b(?:of|draw|sketch|make)\s+(?:a|an|the)?\s*(.+)", message, re.I)
    text = (m.group(1) if m else message).strip().rstrip(".!")
    return text[:60] or "a scene"


def plan_areas(
    view: dict[str, float], n: int, occupied: dict[str, float] | None = None
) -> list[dict[str, int]]:
    """n columns across the middle of the viewport, each overlapping its neighbour; below
    what the canvas already holds when they would cover it."""
    n = max(n, 1)
    width = max(int(view["w"]) - 100, 400)
    col = (width + TASK_OVERLAP * (n - 1)) // n
    x0, y0 = int(view["x"]) + 50, int(view["y"]) + 50
    h = max(int(view["h"]) - 100, 300)
    y0 = below_content(occupied, x0, y0, width, h, 80)
    return [{"x": x0 + i * (col - TASK_OVERLAP), "y": y0, "w": col, "h": h} for i in range(n)]


class ScriptedProjectModel(ScriptedModel):
    def actions_for(self, hints: dict[str, Any]) -> list[dict[str, Any]]:
        fairy = hints.get("fairy")
        if not isinstance(fairy, dict):
            return super().actions_for(hints)
        mode = fairy.get("mode")
        if mode in ("orchestrating-active", "duo-orchestrating-active"):
            return self._orchestrate(fairy)
        if mode in ("working-drone", "working-orchestrator"):
            return self._work(fairy, "mark-my-task-done" if mode == "working-drone" else
                              "mark-duo-task-done")  # fmt: skip
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
            subject = _subject(str(f.get("message") or ""))
            areas = plan_areas(f.get("viewport") or {"x": 0, "y": 0, "w": 1600, "h": 900},
                               max(len(members), 2), f.get("occupied"))  # fmt: skip
            parts = [f"left part of {subject}", f"right part of {subject}"]
            parts += [f"detail {i} of {subject}" for i in range(3, len(areas) + 1)]
            acts: list[dict[str, Any]] = [
                {"_type": "think", "text": f"{len(areas)} side-by-side areas, one per drone, "
                 f"overlapping by {TASK_OVERLAP}px so the halves meet."},
                {"_type": "start-duo-project" if duo else "start-project",
                 "title": subject.capitalize(), "description": f"Draw {subject}.",
                 "plan": "; ".join(f"task {i + 1}: {p}" for i, p in enumerate(parts))
                 + ". All tasks run in parallel; then I review and end."},
            ]  # fmt: skip
            # A duo is the lead and one partner: the partner gets part 1, the lead part 2.
            crew = [members[0], str(f.get("fairy_id"))] if duo else members
            ids = []
            for i, (area, part) in enumerate(zip(areas, parts, strict=False)):
                tid = f"part-{i + 1}"
                ids.append(tid)
                acts.append({"_type": "create-duo-task" if duo else "create-project-task",
                             "taskId": tid, "title": part.capitalize(),
                             "text": f"Draw the {part} inside your area.",
                             **area, "assignee": crew[i % len(crew)]})  # fmt: skip
            mine = [tid for i, tid in enumerate(ids) if crew[i % len(crew)] == f.get("fairy_id")]
            for tid in ids:
                if tid not in mine:
                    acts.append({"_type": "direct-to-start-duo-task" if duo else
                                 "direct-to-start-project-task", "taskId": tid})  # fmt: skip
            if mine:  # duo: work my own part now; review and await after it
                acts.append({"_type": "start-duo-task", "taskId": mine[0]})
                return acts
            acts.append({"_type": "await-duo-tasks-completion" if duo else
                         "await-tasks-completion", "taskIds": ids})  # fmt: skip
            return acts
        done = [t for t in tasks if t["status"] == "done"]
        running = [t for t in tasks if t["status"] == "in-progress"]
        todo = [t for t in tasks if t["status"] == "todo"]
        acts = [{"_type": "think", "text": "Reviewing: " + (", ".join(
            f"{t['id']} is done" for t in done) or "nothing finished yet") + "."}]  # fmt: skip
        me = f.get("fairy_id")
        for t in todo:
            if t.get("assigned_to") != me:
                acts.append({"_type": "direct-to-start-duo-task" if duo else
                             "direct-to-start-project-task", "taskId": t["id"]})  # fmt: skip
        own_todo = [t for t in todo if duo and t.get("assigned_to") == me]
        if own_todo:
            acts.append({"_type": "start-duo-task", "taskId": own_todo[0]["id"]})
            return acts
        if running or todo:
            acts.append({"_type": "await-duo-tasks-completion" if duo else
                         "await-tasks-completion",
                         "taskIds": [t["id"] for t in running + todo]})  # fmt: skip
            return acts
        acts.append({"_type": "message", "text": f"The project is complete: {len(done)} tasks "
                     "drawn and reviewed."})  # fmt: skip
        acts.append({"_type": "end-duo-project" if duo else "end-project"})
        return acts

    def _solo(self, f: dict[str, Any]) -> list[dict[str, Any]]:
        own: list[dict[str, Any]] = list(f.get("own_tasks") or [])
        acts: list[dict[str, Any]] = []
        if not own:
            subject = _subject(str(f.get("message") or ""))
            areas = plan_areas(
                f.get("viewport") or {"x": 0, "y": 0, "w": 1600, "h": 900}, 2, f.get("occupied")
            )
            acts.append({"_type": "think", "text": f"Two parts for {subject}, one at a time."})
            for i, area in enumerate(areas):
                part = ("left", "right")[i]
                own.append({"id": f"solo-{i + 1}", "status": "todo"})
                acts.append({"_type": "create-task", "taskId": f"solo-{i + 1}",
                             "title": f"{part.capitalize()} part of {subject}",
                             "text": f"Draw the {part} part of {subject}.", **area})  # fmt: skip
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
        b = task["bounds"]
        tid = str(task["id"])
        have = set(f.get("existing_ids") or [])
        color = _PALETTE[sum(map(ord, tid)) % len(_PALETTE)]
        x, y, w, h = int(b["x"]) + 20, int(b["y"]) + 20, int(b["w"]) - 40, int(b["h"]) - 40
        shapes = [
            {"_type": "rectangle", "shapeId": f"{tid}-frame", "x": x, "y": y, "w": w, "h": h,
             "color": color, "fill": "none"},
            {"_type": "ellipse", "shapeId": f"{tid}-sun", "x": x + w // 4, "y": y + h // 5,
             "w": w // 2, "h": w // 2 if w // 2 < h // 2 else h // 2, "color": "yellow",
             "fill": "solid"},
            {"_type": "text", "shapeId": f"{tid}-label", "x": x + 10, "y": y + h - 60,
             "text": str(task.get("title") or tid)[:30], "color": "black"},
        ]  # fmt: skip
        acts: list[dict[str, Any]] = [
            {"_type": "think", "text": f"Drawing {task.get('title')} inside my area."}
        ]
        for s in shapes:
            if s["shapeId"] not in have:
                acts.append({"_type": "create", "intent": f"Draw {s['shapeId']}", "shape": s})
        acts.append({"_type": done_action})
        return acts
