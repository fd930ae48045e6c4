"""`scripted`: the deterministic model that needs no key, in modules by concept.

`reading` reads a request's words; `seen` is the canvas as the model is shown it;
`request` holds one request's reading, canvas and placement; `edits` and `drawing` are its
answers (change what is there, draw something new), `pictures` the simple pictures it can
draw; `model` is the provider (`ScriptedModel`); `project` teaches it whole fairy projects
(`ScriptedProjectModel`).
"""

from steward.model.scripted.model import ScriptedModel
from steward.model.scripted.project_model import ScriptedProjectModel

__all__ = ["ScriptedModel", "ScriptedProjectModel"]
