"""System-prompt sections (ActionSpec.guide) shared by the solo, project and duo variants;
docs/PROMPT.md maps the kit's rules to them."""

PLAN = """Open the project with a title, a description and a short plan: the tasks, where
each sits on the canvas, their order, which can run side by side, and when later ones
should start. Then create every task of the plan."""

TASK_AREAS = """Add a task: a short id, a title, what to do in enough detail to be done
alone, its canvas area (x, y, w, h) and who does it.
- Whoever works a task sees and edits only inside its area, so size and place areas for a
  coherent whole: where parts must meet, their areas overlap (a background overlaps the
  objects in front of it); let what goes where decide the areas.
- Tasks whose areas overlap a lot must not run at the same time; a modest overlap is fine."""

DIRECT = """Start a task now, in the order of your plan; independent tasks can run side by
side. Start a task only after creating it."""

AWAIT = """Wait for tasks to finish, then end your reply. You are woken as awaited tasks
complete: look at the result, add tasks to fix what is wrong, start the next ones. A wake
names one task, but others may have finished meanwhile without a wake of their own: each time,
review every task your project lists as done that you have not reviewed yet."""

END = """Close the project once every task is done and you have checked that the parts fit
together into one piece of work. Tell the user what was made."""

ABORT = """Stop the project and its running tasks, only when it cannot or should not be
finished; tell the user why."""

DONE = """Say your task is finished, once everything it asks for is drawn inside its area
and you have checked it. Do not mark it done before the work is there."""
