"""Helpers for tests that watch a live recording grow while another process writes it."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def recorded(recording: Path, kind: str) -> list[dict[str, Any]]:
    """The events of one kind recorded so far (a line being written is not yet an event)."""
    if not recording.exists():
        return []
    events = []
    for text in recording.read_text().splitlines()[1:]:
        try:
            event = json.loads(text)
        except ValueError:
            continue
        if event["kind"] == kind:
            events.append(event)
    return events


def wait_for(predicate: Callable[[], object], timeout: float = 30.0) -> bool:
    """Poll until `predicate()` holds; False after `timeout` s, so a bug fails, not hangs."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False
