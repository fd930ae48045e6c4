"""One module per prompt part; each exposes `PART`."""
