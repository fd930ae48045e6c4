"""What the steward sends the room:

- `broadcaster`: envelopes sequenced, written to the outbox, published, acked,
  retransmitted and resynced; it composes the primitives of `delivery/`;
- `envelopes`: actions packed into envelopes that fit a packet (fragments when one does not);
- `messenger`: chat, prompt and status messages of runs;
- `relay`: users' own edits (`canvas:edit`) sequenced into the room's stream for everyone;
- `agent_state`: the `lk.agent.state` attribute LiveKit's frontends read.
"""
