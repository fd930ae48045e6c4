"""Several `steward worker`s on one LiveKit:

- `livekit_admin`: LiveKit's server API (agent dispatches, room members);
- `failover`: rooms whose steward died get a new one;
- `worker_capacity`: how many rooms one worker takes.
"""
