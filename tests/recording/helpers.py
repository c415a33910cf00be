"""Small recordings made with the writer: a session of a tag on an OS build, closed with its
summary (version 2) or not (a killed session, a version 1 file)."""

from __future__ import annotations

import json
from pathlib import Path

from anemon.events import EndEvent, Event, StartEvent, TelemetryEvent, TrialEvent
from anemon.feeds.live import closing_summary
from anemon.recording.writer import Recorder, make_header
from anemon.store import Session


def session_events(arms: tuple[str, ...], os_build: str, tag: str, trials: int = 4) -> list[Event]:
    """Each arm: START (with the OS build), `trials` TRIALs (the first a warm-up), END done."""
    events: list[Event] = []
    t = 0.0
    for arm in arms:
        events.append(StartEvent(t=t, wall=t, arm=arm, tag=tag, os=os_build, compute="ane"))
        for i in range(trials):
            t += 10.0
            events.append(TrialEvent(t=t, wall=t, arm=arm, tag=tag, trial=i, warmup=i == 0,
                                     decode_tps=40.0 + i, prompt_tps=900.0, gen=64,
                                     thermal=1, app_t=t))  # fmt: skip
            events.append(TelemetryEvent(t=t, wall=t, battery=90.0, power_w=3.0 + i))
        t += 1.0
        events.append(EndEvent(t=t, wall=t, arm=arm, tag=tag, reason="done", trials=trials))
    return events


def make_recording(
    path: Path,
    *,
    tag: str = "sustain",
    os_build: str = "22A100",
    created: str = "2026-01-10T09:00:00+00:00",
    arms: tuple[str, ...] = ("ane_arm", "gpu_arm"),
    summary: bool = True,
    version: int | None = None,
    device: str = "Lab iPhone",
) -> Path:
    """A recording of one session; `summary=False`: killed before it closed; `version`:
    the header says so (1: a file an older anemon wrote, which has no summary)."""
    header = make_header(
        source="test",
        device={"kind": "pymobiledevice3", "udid": "UDID-1", "name": device, "os": "18.0",
                "model": "iPhone17,1"},
        plan={"tag": tag},
    )  # fmt: skip
    header["created"] = created
    if version is not None:
        header["version"] = version
    session = Session()
    with Recorder(path, header) as recorder:
        for event in session_events(arms, os_build, tag):
            recorder.write(event)
            session.add(event)
        if summary:
            recorder.write(closing_summary(session, status="done", tag=tag, created=created))
    return path


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
