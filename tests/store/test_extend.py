"""`Session.extend`: runs of trials and host readings added a column at a time, the same
Session as adding each event in turn (`Session.add`), for regular events and odd ones."""

from __future__ import annotations

import dataclasses
import math
from array import array
from collections import Counter, deque
from typing import Any

import pytest

from anemon.events import (
    Event,
    MarkerEvent,
    StartEvent,
    TelemetryEvent,
    TrialEvent,
)
from anemon.store import Session
from anemon.store.readings import Readings
from anemon.store.session import BULK_MIN


def kept(value: Any) -> Any:
    """What a Session holds, in a form that compares (NaN-safe, arrays by their bytes)."""
    if isinstance(value, array):
        return value.typecode, value.tobytes()
    if isinstance(value, Readings):
        return [repr(event) for event in value]
    if isinstance(value, Counter):
        return sorted(value.items())
    if isinstance(value, deque | list | tuple):
        return [kept(v) for v in value]
    if isinstance(value, dict):
        return [(k, kept(v)) for k, v in value.items()]
    if dataclasses.is_dataclass(value) and not isinstance(value, Event):
        return [(f.name, kept(getattr(value, f.name))) for f in dataclasses.fields(value)]
    return repr(value)


def one_by_one(events: list[Event]) -> Session:
    session = Session()
    for event in events:
        session.add(event)
    return session


def extended(events: list[Event]) -> Session:
    session = Session()
    session.extend(events)
    return session


def trial(i: int, arm: str | None = "a", **fields: Any) -> TrialEvent:
    values: dict[str, Any] = dict(
        t=10.0 + i, wall=1e9 + i, arm=arm, trial=i, app_t=2.0 + i, decode_tps=40.0 + i % 7,
        prompt_tps=900.0, gen=128, battery=90 - i / 100, thermal=i // 50,
        battery_state="unplugged", free_gb=30.0, warmup=i < 2, line=f"TRIAL {i}",
    )  # fmt: skip
    return TrialEvent(**(values | fields))


def power(i: int, **fields: Any) -> TelemetryEvent:
    values: dict[str, Any] = dict(t=9.5 + i, wall=1e9 + i, power_w=3.0 + i % 5 / 10,
                                  charging=False, plugged=False)  # fmt: skip
    return TelemetryEvent(**(values | fields))


def interleaved(count: int, arm: str | None = "a", start: int = 0) -> list[Event]:
    out: list[Event] = []
    for i in range(start, start + count):
        out += [power(i), trial(i, arm)]
    return out


def launch(arm: str, t: float) -> StartEvent:
    return StartEvent(t=t, wall=1e9 + t, arm=arm, app_t=1.0, free_gb=31.0, line=f"START {arm}")


EVERY_FIELD: dict[str, Any] = dict(
    battery=80.0, battery_state="charging", temperature_c=30.5, free_gb=20.0, total_gb=64.0,
    power_w=2.5, charging=True, plugged=True, load_w=4.0, power_in_w=5.0, battery_power_w=1.0,
    load_changed_t=1.0, source="pmd3",
)  # fmt: skip
"""A host reading's every field but its process's."""
CASES: dict[str, list[Event]] = {
    "a launch and its trials, a reading before each": [launch("a", 0.0), *interleaved(200)],
    "two arms' launches": [
        launch("a", 0.0),
        *interleaved(100),
        launch("b", 400.0),
        *interleaved(100, "b", start=100),
    ],
    "trials of two arms in one run, a new arm among them": [
        launch("a", 0.0),
        *[trial(i, "a" if i % 3 else "c") for i in range(BULK_MIN * 2)],
    ],
    "no launch, no arm": interleaved(BULK_MIN, arm=None),
    "readings alone, every field": [
        TelemetryEvent(t=float(i), wall=1e9 + i, **EVERY_FIELD) for i in range(BULK_MIN)
    ],
    "process readings and markers cut the runs": [
        launch("a", 0.0),
        *interleaved(BULK_MIN),
        TelemetryEvent(t=500.0, wall=1e9, pid=7, mem_gb=1.5, cpu_pct=90.0),
        *interleaved(BULK_MIN, start=BULK_MIN),
        MarkerEvent(t=700.0, wall=1e9, note="abort arm"),
        *interleaved(3, start=2 * BULK_MIN),
    ],
    "app times going back, far ahead, missing": [
        launch("a", 0.0),
        *[trial(i, app_t=[5.0, 1.0, None, 500.0, 6.0][i % 5]) for i in range(BULK_MIN * 2)],
    ],
    "values missing, ints and bools for floats": [
        launch("a", 0.0),
        *[
            trial(
                i,
                battery=None,
                thermal=None,
                free_gb=None,
                decode_tps=40,
                gen=True,
                battery_state=None,
                warnings=i % 2,
            )
            for i in range(BULK_MIN)
        ],
        *[power(i, power_w=None, charging=None, battery=50) for i in range(BULK_MIN)],
    ],
    "a reading kept as it came (NaN)": [*interleaved(BULK_MIN), power(99, power_w=math.nan)],
    "a number as text, which `add` takes as a float": [
        *interleaved(BULK_MIN),
        trial(99, decode_tps="41.5"),
    ],
    "a time not finite": [*interleaved(BULK_MIN), trial(99, t=math.inf), power(100)],
    "an app time not a number": [*interleaved(BULK_MIN), trial(99, app_t=math.nan)],
}


@pytest.mark.parametrize("events", CASES.values(), ids=CASES.keys())
def test_extend_keeps_what_adding_each_event_keeps(events: list[Event]) -> None:
    assert kept(extended(events)) == kept(one_by_one(events))


def test_extend_goes_on_from_what_the_session_holds() -> None:
    events = CASES["two arms' launches"]
    session = one_by_one(events[:50])
    session.extend(events[50:])
    assert kept(session) == kept(one_by_one(events))


def test_an_event_add_refuses_is_refused_where_add_refuses_it() -> None:
    events = [*interleaved(BULK_MIN), trial(99, battery_state=["not", "a", "state"])]
    added, extending = Session(), Session()
    with pytest.raises(TypeError):
        for event in events:
            added.add(event)
    with pytest.raises(TypeError):
        extending.extend(events)
    assert kept(extending) == kept(added)
