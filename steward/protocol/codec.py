"""Decoding untrusted bytes into messages: one clear error, never an escaping exception."""

from __future__ import annotations

from typing import TypeVar

from pydantic import ValidationError

from steward.protocol.errors import ProtocolError
from steward.protocol.messages import WireModel

M = TypeVar("M", bound=WireModel)


def _summarise(err: ValidationError) -> str:
    parts = []
    for e in err.errors()[:3]:
        loc = ".".join(str(p) for p in e["loc"]) or "<root>"
        parts.append(f"{loc}: {e['msg']}")
    more = err.error_count() - len(parts)
    return "; ".join(parts) + (f" (+{more} more)" if more > 0 else "")


def decode(model: type[M], data: bytes | str, *, topic: str, max_bytes: int) -> M | ProtocolError:
    """Validate `data` as `model`; oversize, non-JSON and schema errors become ProtocolError."""
    size = len(data)
    if size > max_bytes:
        return ProtocolError(
            kind="oversize", topic=topic, size=size, reason=f"limit is {max_bytes} bytes"
        )
    try:
        return model.model_validate_json(data)
    except ValidationError as err:
        kind = (
            "invalid_json" if any(e["type"] == "json_invalid" for e in err.errors()) else "schema"
        )
        return ProtocolError(kind=kind, topic=topic, size=size, reason=_summarise(err))
    except (ValueError, TypeError, RecursionError) as err:  # e.g. undecodable bytes
        return ProtocolError(kind="invalid_json", topic=topic, size=size, reason=str(err)[:200])
