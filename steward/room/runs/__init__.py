"""The room's runs:

- `sessions`: `RoomSessions`, the one registry of every run (prompted, a fairy's own, a
  revert's): open, resume, cancel, close, list;
- `session`: `RoomSession`, the `SessionPort` one run acts on its room through;
- `revert`: RPC `steward.revert`, taking a whole run back as a run of its own.
"""
