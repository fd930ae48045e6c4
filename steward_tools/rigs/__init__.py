"""What the benchmarks and tests run against, apart from the benchmarks themselves:

- model servers: `anthropic_server` (Messages protocol) and `openai_server` (Chat
  Completions), answered by `responders` (test models that read only the request, through
  `request_text`, drawing from the request's own schema with `schema_sampler`);
- fuzz inputs: `fuzz_seeds` (a valid example of every inbound input), `mutate` (seeded
  hostile variants of them);
- participants in processes of their own (`participant`: one spec in, JSON lines out):
  `clients` (a bench's headless clients), `observer` (a hidden watcher of the steward's
  `ready`), `flooder` (participants that flood), `stream_sender` (one big byte stream);
- `browsers`: Chromium tabs on the client-bridge demo page.
"""
