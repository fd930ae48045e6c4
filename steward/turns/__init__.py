"""The role-independent core every kind of request runs on: one model request streamed into
the canvas (`turn`), a run's state (`run`), the follow-up loop (`loop`), the area guard of a
task (`bounds_guard`) and the room's daily budget (`budget`)."""
