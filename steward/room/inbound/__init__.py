"""What participants send the steward, each checked before anything uses it:

- `packets`: every data packet, counted, rate limited, decoded and bounded, then handed to
  its topic's handler;
- `budget`: what one participant may send in a window, on any topic, read or not;
- `abuse`: strikes for what is refused, and revoking a persistent sender's right to publish;
- `stream_inbox`: byte streams (context and screenshots) matched to their requests, metered;
- `intake`: prompts (RPC `steward.prompt`, voice) and cancels, authorised and rate limited;
- `lk_chat`: LiveKit's `lk.chat`, typed prompts in by the intake's path, chat out;
- `grants`: signed grants bound to the participant session that first showed them;
- `resync_requests`: a browser's `steward:resync`, budgeted, gated, replayed;
- `user_edits`: each participant's own canvas edits since an agent last looked for them.
"""
