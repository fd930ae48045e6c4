"""The single error type for messages that fail validation."""

from __future__ import annotations

from pydantic import BaseModel


class ProtocolError(BaseModel):
    """Why an inbound message was refused; safe to log and to send back."""

    kind: str
    topic: str
    reason: str
    size: int

    def __str__(self) -> str:
        return f"{self.kind} on {self.topic!r} ({self.size} bytes): {self.reason}"
