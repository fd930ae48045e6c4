"""Test and measurement tooling around the steward: benchmarks, a headless reference client
and a loopback livekit-server. The runtime in `steward/` never imports this package; only the
CLI commands that drive it (`steward bench`, `steward demo`, `steward dev`, `steward livekit`)
import it, inside the command."""
