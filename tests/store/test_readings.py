"""`Session.telemetry`: the host's readings as rows of numbers, given back as the events added."""

from __future__ import annotations

import gc
import math
import tracemalloc

import pytest

from anemon.events import IdleEvent, StartEvent, TelemetryEvent, TrialEvent
from anemon.store import Session
from anemon.store.readings import Readings
from anemon.store.session import Series


def varied() -> list[TelemetryEvent]:
    return [
        TelemetryEvent(
            t=1.0,
            wall=1e9,
            power_w=3.25,
            battery=90.0,
            charging=False,
            plugged=True,
            source="pmd3",
            battery_state="charging",
        ),
        TelemetryEvent(
            t=2.0, wall=1e9 + 1, arm="a", pid=4242, cpu_pct=95.5, mem_gb=1.2, gpu_pct=0.0
        ),
        TelemetryEvent(
            t=3.0,
            wall=0.0,
            load_w=4.0,
            power_in_w=5.0,
            battery_power_w=-1.0,
            load_changed_t=2.5,
            temperature_c=31.0,
            free_gb=20.0,
            total_gb=64.0,
        ),
        TelemetryEvent(t=4.0, wall=0.0, power_w=math.nan),  # kept as it came: NaN is not None
        TelemetryEvent(t=math.inf, wall=-0.0, charging=True, battery=-0.0),
        TelemetryEvent(t=5.0, wall=0.0, arm="a", power_w="3"),  # type: ignore[arg-type]
    ]


def test_readings_are_given_back_as_they_were_added():
    readings = Readings()
    events = varied()
    for event in events:
        readings.append(event)
    assert len(readings) == len(events)
    assert list(readings) == [*events[:3], readings[3], *events[4:]]
    assert readings[3] is events[3] and readings[5] is events[5]  # as they came
    assert readings[-1] is events[-1] and readings[1:3] == events[1:3]
    assert readings[::-2] == [events[5], events[3], events[1]]
    assert type(readings[1].pid) is int and readings[0].plugged is True
    assert readings[2].arm is None and readings[2].source == ""
    with pytest.raises(IndexError):
        readings[len(events)]


def test_a_session_keeps_no_reading_as_an_object():
    gc.collect()
    before = sum(isinstance(o, TelemetryEvent) for o in gc.get_objects())  # other tests' too
    session = Session()
    for i in range(1000):
        session.add(TelemetryEvent(t=float(i), wall=0.0, power_w=3.0 + i, plugged=False))
    gc.collect()
    alive = sum(isinstance(o, TelemetryEvent) for o in gc.get_objects())
    assert alive - before <= 1  # at most the last one, held by the status line's `process`
    assert len(session.telemetry) == 1000 and session.telemetry[-1].power_w == 1002.0
    assert session.telemetry[-1].plugged is False


def test_a_reading_takes_less_than_half_an_event_objects_memory():
    events = [TelemetryEvent(t=float(i), wall=1e9 + i, power_w=3.0 + i, battery=90.0 - i,
                             charging=False, plugged=False) for i in range(10_000)]  # fmt: skip
    readings = Readings()
    tracemalloc.start()
    try:
        for event in events:
            readings.append(event)
        taken = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert taken < 10_000 * 150  # an event object and its floats take ~300 bytes


def test_released_readings_keep_their_count_and_those_after_are_given_back():
    readings, kept = Readings(), Readings()
    events = varied()
    for event in events[:3]:
        readings.append(event)
        kept.append(event)
    readings.release()
    assert len(readings) == 3
    for event in events[3:]:
        readings.append(event)
        kept.append(event)
    assert len(readings) == len(events)
    assert readings[3:] == kept[3:] and readings[-1] is events[-1]
    for i in range(3):
        with pytest.raises(IndexError, match="released"):
            readings[i]
    with pytest.raises(IndexError, match="released"):
        readings.columns(2)
    mine, theirs = readings.columns(4), kept.columns(4)
    for name, column in theirs.numbers.items():
        assert column.tolist() == pytest.approx(mine.numbers[name].tolist(), nan_ok=True), name
    assert {k: v.tolist() for k, v in mine.texts.items()} == {
        k: v.tolist() for k, v in theirs.texts.items()
    }
    assert mine.odd == theirs.odd == {1: events[5]}


def test_the_columns_of_some_fields_are_those_of_all_the_columns():
    readings = Readings()
    for event in varied():
        readings.append(event)
    whole = readings.columns(1, 5)
    some = readings.columns(1, 5, names=("t", "mem_gb", "arm"))
    assert set(some.numbers) == {"t", "mem_gb"} and set(some.texts) == {"arm"}
    for name, column in some.numbers.items():
        assert column.tolist() == pytest.approx(whole.numbers[name].tolist(), nan_ok=True), name
        assert column.flags.c_contiguous and column.base is None  # its own: the rows may grow
    assert some.texts["arm"].tolist() == whole.texts["arm"].tolist() == ["a", None, None, None]
    assert some.odd == whole.odd == {2: readings[3]}
    readings.append(varied()[0])  # the rows' buffer is free again: they can grow


def test_a_session_for_its_figures_keeps_no_chart_series_of_the_trials():
    trials = [TrialEvent(t=float(i), wall=0.0, arm="a", trial=i, decode_tps=20.0, gen=64,
                         thermal=1, battery=90.0, free_gb=20.0) for i in range(100)]  # fmt: skip
    idle = IdleEvent(t=100.0, wall=0.0, thermal=2, battery=89.0, free_gb=19.0)
    start = StartEvent(t=-1.0, wall=0.0, arm="a", free_gb=21.0)
    for add in ("one by one", "in bulk"):
        charted, bare = Session(), Session(charts=False)
        for session in (charted, bare):
            events = [start, *trials, idle]
            if add == "in bulk":
                session.extend(events)
            else:
                for event in events:
                    session.add(event)
        assert len(charted.thermal.t) == 101 and len(charted.free_gb.t) == 102, add
        assert not len(bare.thermal.t) and not len(bare.free_gb.t), add
        assert bare.battery == charted.battery and len(bare.battery.t) == 101, add
        columns = [{k: bytes(v) for k, v in s.arms["a"].columns.items()} for s in (bare, charted)]
        assert columns[0] == columns[1], add  # the figures' own (bytes: NaN is not NaN)


def test_a_released_series_keeps_its_count_and_takes_more():
    series = Series()
    for i in range(5):
        series.append(float(i), 10.0 * i)
    series.release()
    assert series.count == series.released == 5 and not len(series.t)
    series.append(5.0, 50.0)
    series.append(6.0, None)  # not a value: not counted
    assert series.count == 6 and list(series.t) == [5.0] and list(series.value) == [50.0]


def test_a_session_for_its_figures_keeps_no_chart_series_of_the_readings():
    events = [TelemetryEvent(t=float(i), wall=0.0, power_w=3.0, temperature_c=30.0,
                             battery=90.0, free_gb=20.0) for i in range(200)]  # fmt: skip
    events[3] = TelemetryEvent(t=3.0, wall=0.0, arm="x", cpu_pct=50.0)  # the app's process
    for add in ("one by one", "in bulk"):
        charted, bare = Session(), Session(charts=False)
        for session in (charted, bare):
            if add == "in bulk":
                session.extend(events)
            else:
                for event in events:
                    session.add(event)
        assert len(charted.power_w.t) == len(charted.temperature_c.t) == 199, add
        assert len(charted.arms["x"].process["cpu_pct"].t) == 1, add
        assert not len(bare.power_w.t) and not len(bare.temperature_c.t), add
        assert not len(bare.arms["x"].process["cpu_pct"].t), add  # the arm seen, not charted
        assert list(bare.arms) == list(charted.arms) == ["x"], add
        assert len(charted.free_gb.t) == 199 and not len(bare.free_gb.t), add
        assert bare.battery == charted.battery, add  # the energy figures read it
        assert list(bare.telemetry) == list(charted.telemetry) == events, add
