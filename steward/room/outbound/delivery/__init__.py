"""Small primitives of envelope delivery, one concept each, that `outbound.broadcaster`
composes:

- `sequencer`: each session's seq and the room-wide order;
- `preview_pacer`: which previews (partial envelopes) are worth sending;
- `flush_queue`: envelopes numbered and waiting for the room's next outbox INSERT;
- `ack_clock`: a participant's ack round trip and retransmit timeout (RFC 6298, Karn);
- `ack_tracker`: what each participant was sent and has not acked, and which acks are valid;
- `retransmit_plan`: what one pass of the retransmit loop resends, resyncs or gives up on;
- `ack_writer`: ack rows batched into one outbox INSERT per flush;
- `resync_gate`: no second replay, nor retransmits, to a participant that has not acked one;
- `in_flight`: how many packets LiveKit may hold for a room before hand-over waits;
- `stats`: the per-session and per-room delivery figures.

None of them publishes or talks to LiveKit; none knows about the others.
"""
