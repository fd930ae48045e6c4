"""Fakes, rigs and helpers the unit and integration tests share."""
