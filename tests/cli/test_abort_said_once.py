"""Issue 24: "an abort's reason is printed twice". Under the summary table a run says why
each arm did not complete once: the table's footnote ("a aborted: the operator aborted the
session"), not again as an outcome line."""

from __future__ import annotations


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
