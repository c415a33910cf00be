"""The process table (/proc), for the tests that check nothing is left running: a hook's
children, a command that hangs on a silent usbmuxd."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterable
from pathlib import Path

import pytest

TIMEOUT_S = 30.0
"""A hang guard, never a timing assertion."""

needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")


def running(pid: int) -> bool:
    """Alive and not a zombie (a container's init may not reap an orphan)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return "\nState:\tZ" not in status


def in_group(pgid: int) -> list[int]:
    """The live processes of process group `pgid` (a session started with
    `start_new_session=True` is the group of its leader's pid)."""
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and running(int(entry.name)):
            try:
                if os.getpgid(int(entry.name)) == pgid:
                    members.append(int(entry.name))
            except ProcessLookupError:
                continue
    return members


def until_gone(pids: Iterable[int], what: str) -> None:
    """Until none of `pids` runs (a hang guard of TIMEOUT_S, then the test fails)."""
    pids = list(pids)
    deadline = time.monotonic() + TIMEOUT_S
    while left := [pid for pid in pids if running(pid)]:
        if time.monotonic() > deadline:
            for pid in left:  # the test fails; it leaves nothing running all the same
                os.kill(pid, signal.SIGKILL)
            raise AssertionError(f"{what}: still running after {TIMEOUT_S:g} s: {left}")
        time.sleep(0.05)


def until_exists(path: Path, what: str) -> str:
    """Until `path` holds a complete line (a hang guard of TIMEOUT_S); its text."""
    deadline = time.monotonic() + TIMEOUT_S
    while not (path.exists() and (text := path.read_text()).endswith("\n")):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what} ({path})")
        time.sleep(0.05)
    return text
