"""The LiveKit room runtime: participants, host election, context requests, the envelope
broadcaster (seq, ack, retransmit, resync), relay of user edits, prompt intake, dispatch.

Transport only: it knows the protocol, not the fairies; agents reach it through
`steward.ports.SessionPort`.
"""
