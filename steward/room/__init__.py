"""The LiveKit room runtime: participants, host election, snapshot requests, the envelope
broadcaster (seq, ack, retransmit, resync; its primitives in `room.delivery`), relay of user
edits, inbound packets, prompt intake and the runs (sessions), and the multi-worker side (the
LiveKit admin API, failover of rooms whose steward died).

Transport only: it knows the protocol, not the fairies; agents reach it through
`steward.ports.SessionPort`.
"""
