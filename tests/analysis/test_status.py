"""`status` and `status_reason` of line-protocol.md "Sustained and energy figures": how an
arm's last round ended, in every format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from anemon.analysis import render
from anemon.analysis.summary import NO_END, ArmSummary, summarize
from anemon.events import (
    EndEvent,
    ErrorEvent,
    Event,
    MarkerEvent,
    Phase,
    PhaseEvent,
    StartEvent,
    TrialEvent,
)
from anemon.recording.reader import open_source
from anemon.store import Session

RECORDINGS = Path(__file__).parents[2] / "recordings"
WATCHDOG = "no trial for 300 s: the app is stuck"


def start(t: float, arm: str = "a") -> StartEvent:
    return StartEvent(t=t, wall=t, arm=arm)


def trials(first: float, count: int, arm: str = "a") -> list[Event]:
    return [
        TrialEvent(t=first + i, wall=first + i, arm=arm, trial=i + 1, decode_tps=50.0, gen=10)
        for i in range(count)
    ]


def end(t: float, reason: str, arm: str = "a", count: int = 3) -> EndEvent:
    return EndEvent(t=t, wall=t, arm=arm, reason=reason, trials=count)


def app_error(t: float, message: str, arm: str = "a") -> ErrorEvent:
    return ErrorEvent(t=t, wall=t, arm=arm, message=message, line=f"[bench] ERROR: {message}")


def watchdog(t: float, message: str = WATCHDOG, arm: str = "a") -> ErrorEvent:
    """What the controller's `error` writes (anemon/control/controller.py)."""
    return ErrorEvent(t=t, wall=t, arm=arm, source="controller", message=message,
                      line=f"anemon: ERROR: {message}")  # fmt: skip


def verdict(t: float, phase: Phase, reason: str, arm: str = "a") -> PhaseEvent:
    """The controller's phase after a launch: its reason is ArmOutcome.describe()."""
    return PhaseEvent(t=t, wall=t, arm=arm, source="controller", phase=phase, reason=reason)


def marker(t: float, note: str, arm: str | None = "a") -> MarkerEvent:
    return MarkerEvent(t=t, wall=t, arm=arm, source="operator", note=note)


def only(events: list[Event]) -> ArmSummary:
    (summary,) = summarize(Session.from_events(events))
    return summary


def status(events: list[Event]) -> tuple[str, str | None]:
    s = only(events)
    return s.status, s.status_reason


def test_done_by_its_end() -> None:
    assert status([start(0), *trials(1, 3), end(5, "done")]) == ("done", None)


def test_done_by_the_controller_even_after_an_error_that_did_not_end_it() -> None:
    events = [start(0), *trials(1, 3), app_error(2.5, "slow"), end(5, "done"),
              verdict(5, "done", "a: done: 3 trials")]  # fmt: skip
    assert status(events) == ("done", None)


def test_failed_by_an_error_line() -> None:
    events = [start(0), *trials(1, 3), app_error(4, "Metal GPU Timeout"), end(5, "error")]
    assert status(events) == ("failed", "Metal GPU Timeout")


def test_failed_by_an_end_with_error_and_no_error_line() -> None:
    assert status([start(0), *trials(1, 3), end(5, "error")]) == ("failed", "the app ended: error")


def test_failed_by_the_controllers_watchdog() -> None:
    events = [start(0), *trials(1, 3), watchdog(400),
              verdict(400, "aborted", f"a: failed: {WATCHDOG}")]  # fmt: skip
    assert status(events) == ("failed", WATCHDOG)


def test_failed_by_the_watchdog_when_the_log_stops_after_its_error() -> None:
    assert status([start(0), *trials(1, 3), watchdog(400)]) == ("failed", WATCHDOG)


def test_aborted_by_the_operator() -> None:
    events = [start(0), *trials(1, 42), marker(50, "abort arm"),
              verdict(50, "aborted", "a: aborted: the operator aborted the arm")]  # fmt: skip
    s = only(events)
    assert (s.status, s.status_reason) == ("aborted", "the operator aborted the arm")
    assert render.status_cell(s) == "aborted after 42 trials"


def test_aborted_by_a_signal_the_app_ended_on() -> None:
    events = [start(0), *trials(1, 3), marker(5, "abort session (SIGINT)", arm=None),
              end(6, "aborted")]  # fmt: skip
    assert status(events) == ("aborted", "abort session (SIGINT)")


def test_aborted_by_a_marker_when_the_log_stops() -> None:
    assert status([start(0), *trials(1, 3), marker(5, "abort arm")]) == ("aborted", "abort arm")


def test_a_marker_that_aborted_nothing_is_not_an_abort() -> None:
    events = [start(0), *trials(1, 3), end(5, "done"), marker(6, "abort arm: no arm is running")]
    assert status(events) == ("done", None)


def test_incomplete_when_the_log_stops_with_no_end() -> None:
    assert status([start(0), *trials(1, 3)]) == ("incomplete", NO_END)


def test_incomplete_names_an_app_error_it_saw() -> None:
    events = [start(0), *trials(1, 3), app_error(4, "Metal GPU Timeout")]
    assert status(events) == ("incomplete", f"{NO_END} (last error: Metal GPU Timeout)")


def test_the_last_round_decides() -> None:
    first_failed = [start(0), *trials(1, 2), watchdog(300),
                    verdict(300, "aborted", f"a: failed: {WATCHDOG}"),
                    start(400), *trials(401, 2), end(405, "done"),
                    verdict(405, "done", "a (round 2): done: 2 trials")]  # fmt: skip
    assert status(first_failed) == ("done", None)
    second_failed = [start(0), *trials(1, 2), end(3, "done"),
                     verdict(3, "done", "a: done: 2 trials"), start(400), *trials(401, 5),
                     watchdog(700),
                     verdict(700, "aborted", f"a (round 2): failed: {WATCHDOG}")]  # fmt: skip
    s = only(second_failed)
    assert (s.status, s.status_reason) == ("failed", WATCHDOG)
    assert render.status_cell(s) == "failed after 5 trials"


def test_a_launch_refused_before_its_start_fails_the_arm() -> None:
    events = [start(0), *trials(1, 2), end(3, "done"), verdict(3, "done", "a: done: 2 trials"),
              watchdog(400, "only 1.0 GB free"),
              verdict(400, "aborted", "a (round 2): failed: only 1.0 GB free")]  # fmt: skip
    assert status(events) == ("failed", "only 1.0 GB free")


def test_an_unparsable_verdict_keeps_its_words() -> None:
    events = [start(0), *trials(1, 2), verdict(3, "aborted", "something else")]
    assert status(events) == ("aborted", "something else")


@pytest.mark.parametrize("name", sorted(p.name for p in RECORDINGS.glob("*.jsonl")))
def test_recordings(name: str) -> None:
    summaries = summarize(Session.from_events(open_source(RECORDINGS / name)))
    got = {s.arm: (s.status, s.status_reason) for s in summaries}
    if name == "sim-hang-2b.jsonl":
        assert got == {
            "minicpm5_2b_ane_pal8": (
                "failed",
                "no first trial after 600 s: the arm is dead, not slow",
            ),
            "minicpm5_2b_ane": ("done", None),
        }
    else:
        assert set(got.values()) == {("done", None)}


def test_markdown_shows_a_status_column_and_the_reasons_when_some_arm_is_not_done() -> None:
    events = [start(0, "b"), *trials(1, 2, "b"), end(3, "done", "b"),
              start(10), *trials(11, 42), marker(60, "abort arm"),
              verdict(60, "aborted", "a: aborted: the operator aborted the arm")]  # fmt: skip
    md = render.markdown(summarize(Session.from_events(events)))
    lines = md.splitlines()
    assert lines[0].startswith("| arm | status | trials |")
    assert lines[2].startswith("| b | done | 2 |")
    assert lines[3].startswith("| a | aborted after 42 trials | 42 |")
    assert lines[-1] == "a aborted: the operator aborted the arm"


def test_markdown_notes_no_reason_for_a_plain_incomplete() -> None:
    md = render.markdown([only([start(0), *trials(1, 3)])])
    assert md.splitlines()[2].startswith("| a | incomplete after 3 trials | 3 |")
    assert md.endswith("|\n")  # no note: the status says it all
    with_error = [only([start(0), *trials(1, 3), app_error(4, "Metal GPU Timeout")])]
    assert render.markdown(with_error).splitlines()[-1] == (
        f"a incomplete: {NO_END} (last error: Metal GPU Timeout)"
    )


def test_markdown_has_no_status_column_when_every_arm_is_done() -> None:
    md = render.markdown([only([start(0), *trials(1, 3), end(5, "done")])])
    assert md.startswith("| arm | trials |") and "status" not in md


def test_json_and_csv_carry_status_and_reason() -> None:
    failed = only([start(0), *trials(1, 3), watchdog(400)])
    done = only([start(0, "b"), *trials(1, 3, "b"), end(5, "done", "b")])
    (obj_failed, obj_done) = json.loads(render.to_json([failed, done]))
    assert (obj_failed["status"], obj_failed["status_reason"]) == ("failed", WATCHDOG)
    assert (obj_done["status"], obj_done["status_reason"]) == ("done", None)
    header, row_failed, row_done = render.to_csv([failed, done]).splitlines()
    assert ",status,status_reason," in header
    assert f",failed,{WATCHDOG}," in row_failed and ",done,," in row_done


def test_the_rich_table_never_drops_the_status_or_cuts_a_name() -> None:
    from rich.console import Console

    name = "minicpm5_2b_ane_pal8_with_a_long_name"
    s = only([start(0, name), *trials(1, 3, name), watchdog(400, arm=name)])
    console = Console(width=60, record=True)
    console.print(render.rich_table([s]))
    text = console.export_text()
    assert name in text and "failed after 3" in text
    assert f"{name} failed: {WATCHDOG}" in " ".join(text.split())  # the caption, wrapped
