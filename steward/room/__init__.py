"""One LiveKit room, as the steward serves it. Transport only: it knows the protocol, not the
fairies; agents reach it through `steward.ports.SessionPort`.

Grouped by direction, beside the runtime that wires them:

- `inbound/`: what participants send the steward, checked before it is used (prompts,
  packets, streams, budgets, strikes, grants, resync requests, users' own edits);
- `context/`: what the steward asks browsers for (a view's shapes and screenshot, cached
  and prefetched, and whose view that is);
- `outbound/`: what the steward sends the room (the broadcaster and its `delivery/`
  primitives, envelopes, chat and statuses, relayed edits, the agent-state attribute);
- `runs/`: the room's one registry of runs (prompted, a fairy's own, a revert's), the
  `SessionPort` each run gets, taking a run back;
- `workers/`: several workers on one LiveKit (room hand-over, capacity, failover);
- here: `runtime` (wires one connected room), `connect` (joining), `deps` (what the
  composition root hands a room), `participants` (who is in the room, the host),
  `owners` (the steward's own owner names), `livekit_conventions` (what makes the steward
  look like a LiveKit agent).

Imports run one way between the folders (`outbound` < `inbound` < `context` < `runs` <
this level; `workers` stands apart): docs/ARCHITECTURE.md has the table, a test checks it.
"""
