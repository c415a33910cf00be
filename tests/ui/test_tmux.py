"""One end-to-end run in a real terminal: `anemon replay SAMPLE` under tmux, read, quit."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "recordings" / "sim-sustain-1b-v2.jsonl"
TIMEOUT_S = 30.0

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


SERVER = f"anemon-test-tmux-{os.getpid()}"
"""A tmux server of our own (-L, no config), without COLUMNS/LINES (Textual would take them for
the terminal's size): the operator's, or another test's, could have another size or options."""


def tmux(*args: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "TMUX")}
    done = subprocess.run(
        ["tmux", "-L", SERVER, "-f", os.devnull, *args],
        capture_output=True, text=True, check=True, env=env,
    )  # fmt: skip
    return done.stdout


def wait_for(session: str, predicate, what: str) -> str:
    """Poll the screen until `predicate(screen)` (overall timeout: the test fails, not hangs)."""
    deadline = time.monotonic() + TIMEOUT_S
    screen = ""
    while time.monotonic() < deadline:
        screen = tmux("capture-pane", "-p", "-t", session)
        if predicate(screen):
            return screen
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}; screen was:\n{screen}")


def test_replay_in_a_real_terminal_shows_the_dashboard_and_quits_cleanly(tmp_path: Path) -> None:
    session = f"anemon-test-{tmp_path.name}"
    status = tmp_path / "status"
    command = (
        f"{sys.executable} -m anemon replay {SAMPLE} --speed max; echo $? > {status}; sleep 60"
    )
    tmux("new-session", "-d", "-s", session, "-x", "120", "-y", "40", "-c", str(REPO), command)
    try:
        expected = ("phase done", "■ end", "decode tok/s", "thermal state", "minicpm5_1b_ane_pal8",
                    "╭─ power W", "power ", "╭─ log", "Quit")  # fmt: skip
        wait_for(session, lambda s: all(seen in s for seen in expected), "the whole dashboard")
        tmux("send-keys", "-t", session, "q")
        deadline = time.monotonic() + TIMEOUT_S
        while not status.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert status.read_text().strip() == "0"
        after = tmux("capture-pane", "-p", "-t", session)
        assert "Traceback" not in after
    finally:
        subprocess.run(["tmux", "-L", SERVER, "kill-server"], capture_output=True, check=False)
