"""`anemon replay SOURCE --headless`: played through to the summary; a signal stops it (130)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from anemon.cli import main

SAMPLE = Path(__file__).parents[2] / "recordings" / "sim-sustain-1b-v2.jsonl"


def test_a_headless_replay_at_max_prints_progress_then_the_summary(capsys):
    assert main(["replay", str(SAMPLE), "--headless", "--speed", "max"]) == 0
    out = capsys.readouterr().out
    assert "launched" in out and "trial 1 " in out
    assert out.index("trial 1 ") < out.index("minicpm5_1b_ane_pal8 │")  # the table comes last


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_a_headless_replay_with_130(sig):
    proc = subprocess.Popen(
        [sys.executable, "-m", "anemon", "replay", str(SAMPLE), "--headless", "--speed", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        first = proc.stdout.readline()  # playing: the first event's line
    finally:
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
    assert first.strip()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert "┏" not in out  # stopped: no summary
