"""Issue 24: "an abort's reason is printed twice". Under the summary table a run says why
each arm did not complete once: the table's footnote ("a aborted: the operator aborted the
session"), not again as an outcome line."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from tests.recorded import recorded, wait_for

WHY = "the operator aborted the session"


@pytest.mark.slow
def test_a_signal_s_abort_is_said_once_under_the_table(tmp_path):
    record = tmp_path / "demo.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "anemon", "demo", "--headless", "--record", str(record)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert wait_for(lambda: recorded(record, "trial")), "no trial recorded"
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    progress, _, under = out.rpartition("┘")  # the table's last line
    assert f"minicpm5_1b_ane_pal8  phase aborted: minicpm5_1b_ane_pal8: aborted: {WHY}" in progress
    assert under.count(WHY) == 1 and f"minicpm5_1b_ane_pal8 aborted: {WHY}" in under
    assert "not run: minicpm5_1b_gpu_int8" in under and "aborted by a signal (SIGINT)" in under


def test_a_failure_the_table_does_not_say_is_still_said(tmp_path, capsys):
    """An A/B arm's first round that failed while its last completed: the table says the
    arm is done, so the outcome line says how the first round ended."""
    from types import SimpleNamespace

    from anemon.analysis.summary import summarize
    from anemon.cli.run import outcome_lines
    from anemon.control.outcome import ArmOutcome, RunResult
    from anemon.events import EndEvent, StartEvent, TrialEvent
    from anemon.store import Session

    session = Session.from_events([
        StartEvent(t=0, wall=0, arm="a"), TrialEvent(t=1, wall=1, arm="a", decode_tps=5.0),
        EndEvent(t=2, wall=2, arm="a", reason="done", trials=1),
    ])  # fmt: skip
    result = RunResult((ArmOutcome("a", 1, "failed", "jetsam"), ArmOutcome("a", 2, "done")))
    feed = SimpleNamespace(result=result, controller=SimpleNamespace(stopped=None))
    assert outcome_lines(feed, told=summarize(session)) == ["not completed: a: failed: jetsam"]
