"""What the steward asks browsers for, to show a model the canvas:

- `snapshot_fetcher`: RPC `steward.context` and its byte streams, whose browser to ask,
  retries, screenshots;
- `snapshot_cache`: recent answers and the prefetches in flight;
- `composing`: a user is typing or speaking a prompt, so its context is fetched now;
- `views`: the viewport and selection each participant publishes (whose view a prompt sees).
"""
