"""HTTP API (aiohttp): the run endpoint, health and metrics."""
