"""A headless reference client that joins a room like a browser (tests, demo, benchmarks)."""
