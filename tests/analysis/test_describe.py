"""One wording per event kind (anemon/analysis/describe.py): headless prints it, the log panel
shows it, so the two never say the same event two ways."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from anemon.analysis.describe import describe
from anemon.events import (
    EVENT_TYPES,
    AlertEvent,
    Check,
    CooldownEvent,
    CrashEvent,
    EndEvent,
    ErrorEvent,
    Event,
    GapEvent,
    LoadEvent,
    MarkerEvent,
    PhaseEvent,
    PreflightEvent,
    RecordEvent,
    ReportEvent,
    ResetEvent,
    StartEvent,
    TextEvent,
    TrialEvent,
)
from anemon.headless import HeadlessView
from anemon.store.session import _LOGGED
from anemon.ui.series import log_text

AT = {"t": 3.0, "wall": 0.0}
SAID = [
    (StartEvent(**AT, arm="a", compute="ane", free_gb=20.0), "launched (ane, free 20.0 GB)"),
    (LoadEvent(**AT, load_s=1.5, cold=True), "loaded in 1.50 s (cold)"),
    (TrialEvent(**AT, trial=2, decode_tps=40.0, prompt_tps=300.0, thermal=1, battery=80.0),
     "  trial 2  decode 40.0 tok/s  prefill 300 tok/s  fair  battery 80 %"),
    (EndEvent(**AT, reason="done", trials=5), "ended: done after 5 trials"),
    (ErrorEvent(**AT, message="out of memory"), "ERROR: out of memory"),
    (TextEvent(**AT, line="hello\x1b[2J"), "hello\\x1b[2J"),
    (PhaseEvent(**AT, phase="cooling", reason="until fair"), "phase cooling: until fair"),
    (PhaseEvent(**AT, phase="running"), "phase running"),
    (MarkerEvent(**AT, note="fan on"), "marker: fan on"),
    (GapEvent(**AT, state="begin"), "gap begin"),
    (GapEvent(**AT, state="end", reason="back"), "gap end: back"),
    (ResetEvent(**AT, reason="the start of the file changed"),
     "new log: the start of the file changed"),
    (ResetEvent(**AT, reason="the log was rotated", read_on=True),
     "same log, read on: the log was rotated"),
    (CooldownEvent(**AT, elapsed_s=30.0, min_s=20.0, cap_s=600.0, until="fair", thermal=2,
                   basis="app"),
     "cooldown waiting: 30 s (min 20, cap 600), thermal serious from app, until fair"),
    (AlertEvent(**AT, alert="thermal", note="serious"), "ALERT thermal: serious"),
    (PreflightEvent(**AT, status="warn", checks=(Check("thermal", "warn", "serious"),
                                                 Check("device", "pass", "sim"))),
     "pre-flight warn: thermal"),
    (PreflightEvent(**AT, status="fail", forced=True, checks=(Check("disk", "fail", "1 GB"),)),
     "pre-flight fail: disk (going on: --force)"),
    (CrashEvent(**AT, report="jetsam", reason="jetsam: per-process-limit at 2.2 GB",
                file="JetsamEvent-2026-12-02-010203.ips"),
     "JETSAM report JetsamEvent-2026-12-02-010203.ips: jetsam: per-process-limit at 2.2 GB"),
    (ReportEvent(**AT, tool="yardstick", tokens=14336, thermal_start=0, thermal_peak=2,
                 thermal_end=2, energy_j=2970.0, energy_note="from the 1 % battery gauge"),
     "yardstick reported: 14,336 tokens, thermal nominal → serious → serious, 2,970.0 J "
     "from the 1 % battery gauge"),
]  # fmt: skip
NOT_SAID = {"idle", "telemetry", "summary"}
"""Kinds nobody reads line by line (the charts and the summary show them)."""


def test_every_kind_is_worded_or_said_not_to_be():
    worded = {type(event).kind for event, _ in SAID}
    assert worded | NOT_SAID == set(EVENT_TYPES) and not worded & NOT_SAID


@pytest.mark.parametrize(("event", "text"), SAID, ids=[f"{e.kind}-{i}" for i, (e, _) in
                                                       enumerate(SAID)])  # fmt: skip
def test_headless_and_the_log_panel_say_an_event_in_its_one_wording(event: Event, text: str):
    words = describe(event)
    assert words is not None and words.text == text
    out = io.StringIO()
    HeadlessView(Console(file=out, width=300, color_system=None)).handle(event)
    line = out.getvalue().splitlines()[0]
    assert line.endswith(text) and line.startswith("     3.0s ")
    if isinstance(event, _LOGGED) and not isinstance(event, RecordEvent):  # lines: as they came
        assert log_text(event) == f"── {text}"


def test_the_log_panel_shows_a_line_as_it_came_and_headless_its_meaning():
    event = ErrorEvent(**AT, message="out of memory", line="ERROR: out of memory code=9")
    assert log_text(event) == "ERROR: out of memory code=9"
    words = describe(event)
    assert words is not None and (words.text, words.style) == ("ERROR: out of memory", "bold red")


def test_a_failed_recording_is_worded_as_the_marker_it_is():
    from anemon.events import RecordingFailedEvent

    words = describe(RecordingFailedEvent(t=1.0, wall=1.0, note="disk full"))
    assert words is not None and words.text == "marker: disk full"
