"""ffi_router's start-up check of the livekit SDK internals it relies on."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from livekit.rtc._ffi_client import FfiQueue

from steward import ffi_router

ROOT = Path(__file__).resolve().parents[2]


def test_the_installed_sdk_has_every_internal_the_router_uses() -> None:
    assert ffi_router.sdk_internals_problems() == []
    ffi_router.require_sdk_internals()


def test_the_named_pin_is_the_one_pyproject_installs() -> None:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    pins = [m.group(1) for d in deps if (m := re.fullmatch(r"livekit==(\S+)", d))]
    assert pins == [ffi_router.PINNED_SDK]


def test_a_missing_message_field_fails_naming_the_versions(monkeypatch: Any) -> None:
    fields = {**ffi_router.EVENT_FIELDS, "publish_data": ("async_id", "delivery_receipt")}
    monkeypatch.setattr(ffi_router, "EVENT_FIELDS", fields)
    with pytest.raises(ffi_router.SdkInternalsChanged) as err:
        ffi_router.require_sdk_internals()
    text = str(err.value)
    assert f"livekit=={ffi_router.PINNED_SDK}" in text
    assert "FfiEvent.publish_data.delivery_receipt is missing" in text


def test_a_queue_without_its_subscriber_list_is_reported(monkeypatch: Any) -> None:
    class Reworked:
        def subscribe(self, loop: Any = None, filter_fn: Any = None) -> None:
            return None

    monkeypatch.setattr(ffi_router, "FfiQueue", Reworked)
    problems = ffi_router.sdk_internals_problems()
    assert problems == ["FfiQueue._lock / FfiQueue._subscribers are missing"]


def test_subscriber_entries_of_another_shape_are_reported(monkeypatch: Any) -> None:
    class Paired(FfiQueue[Any]):
        def subscribe(self, loop: Any = None, filter_fn: Any = None) -> Any:
            queue = super().subscribe(loop, filter_fn)
            entries: list[Any] = self._subscribers
            entries[-1] = (queue, filter_fn)  # loop dropped: another layout
            return queue

    monkeypatch.setattr(ffi_router, "FfiQueue", Paired)
    assert ffi_router.sdk_internals_problems() == [
        "FfiQueue._subscribers entries are no longer (queue, loop, filter)"
    ]
