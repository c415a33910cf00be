"""The energy readings kept in buffers that grow in place (analysis/growing.py): a reading
is an append, never a copy of those before, and the arrays are those the figures read when
they were masked and sorted anew from all the readings (checked here against that way, on
generated sessions with out-of-order, missing, charging, load and process readings)."""

from __future__ import annotations

import random

import numpy as np

from anemon.analysis.growing import _SPREAD, Column, GapMedian, TimeSeries
from anemon.analysis.summary import (
    Energy,
    EnergyReadings,
    ReadingArrays,
    ReadingsMark,
    Samples,
    Spans,
    _value_at,
    energy_figures,
    process_figures,
)
from anemon.analysis.sustained import median
from anemon.analysis.system_load import LoadSteps
from anemon.events import Event, TelemetryEvent, TrialEvent
from anemon.store import Session
from anemon.store.session import PROCESS_FIELDS


def reading(t: float, watts: float = 3.0) -> TelemetryEvent:
    return TelemetryEvent(t=t, wall=t, power_w=watts, battery=80.0, cpu_pct=90.0)


def test_a_reading_is_appended_in_place_not_copied_with_those_before() -> None:
    session, readings = Session(), EnergyReadings()
    session.add(reading(1.0))
    readings.update(session)
    first = readings.arrays
    for t in (2.0, 3.0):
        session.add(reading(t))
        readings.update(session)
    later = readings.arrays
    # the same buffer, not a copy (the old way copied every reading each second)
    assert np.shares_memory(first.power_t, later.power_t)
    assert np.shares_memory(first.process["cpu_pct"].t, later.process["cpu_pct"].t)
    assert np.shares_memory(first.battery_t, later.battery_t)
    assert first.power_t.tolist() == [1.0] and later.power_t.tolist() == [1.0, 2.0, 3.0]
    assert not later.power_t.flags.writeable


def test_a_load_reading_is_appended_in_place_too() -> None:
    session, readings = Session(), EnergyReadings()
    steps = []
    for t, changed in ((1.0, 0.0), (2.0, 0.0), (3.0, 2.5), (4.0, 3.5)):
        session.add(TelemetryEvent(t=t, wall=t, load_w=t, load_changed_t=changed, plugged=True))
        readings.update(session)
        steps.append(readings.arrays.load)
    assert np.shares_memory(steps[0].seen_t, steps[-1].seen_t)
    assert np.shares_memory(steps[2].t, steps[-1].t)
    assert (steps[-1].t.tolist(), steps[-1].w.tolist()) == ([0.0, 2.5, 3.5], [2.0, 3.0, 4.0])
    assert steps[0].w.tolist() == [1.0]  # the change's value then, kept in its view
    assert (steps[-1].refresh_s, steps[-1].hold_s) == (1.0, 2.0)


def test_a_column_doubles_when_full_and_leaves_its_views_as_they_were() -> None:
    column = Column()
    capacities = set()
    for value in range(1000):
        column.append(float(value))
        capacities.add(column.capacity)
    assert sorted(capacities) == [64, 128, 256, 512, 1024]  # ten appends' copies, not 1000
    before = column.view
    column.append(-1.0)
    assert before.tolist() == [float(v) for v in range(1000)]


def test_a_big_column_keeps_every_value_and_view_while_its_copy_is_spread() -> None:
    rng = random.Random(3)
    column, expected, views = Column(), [], []
    while len(expected) < 5 * _SPREAD:  # three doublings past the spread's size
        if rng.random() < 0.5:
            column.append(float(len(expected)))
            expected.append(float(len(expected)))
        else:
            more = np.arange(len(expected), len(expected) + rng.choice((1, 7, 300, 9000)))
            column.extend(more.astype(float))
            expected.extend(more.astype(float).tolist())
        views.append(column.view)
    assert column.view.tolist() == expected
    assert all(view.tolist() == expected[: len(view)] for view in views[::97])


def test_a_full_big_column_has_its_next_buffer_filled_already() -> None:
    column = Column(np.zeros(_SPREAD))  # its buffer: twice that
    for value in range(_SPREAD):
        column.append(float(value))
        moved = column._moved  # what the next buffer holds: four for each past 3/4 full
        assert moved == max(0, min(len(column), 4 * (len(column) - 3 * _SPREAD // 2)))
    assert len(column) == column.capacity == column._moved  # the doubling copies nothing more
    column.append(-1.0)
    assert column.view.tolist() == [0.0] * _SPREAD + [float(v) for v in range(_SPREAD)] + [-1.0]


def test_an_out_of_order_reading_makes_new_buffers_leaving_the_old_views() -> None:
    series = TimeSeries()
    for t, value in ((1.0, 10.0), (3.0, 30.0), (3.0, 31.0)):
        series.add(t, value)
    t_before, value_before = series.t, series.value
    series.add(2.0, 20.0)
    series.add(3.0, 32.0)
    assert (series.t.tolist(), series.value.tolist()) == (
        [1.0, 2.0, 3.0, 3.0, 3.0], [10.0, 20.0, 30.0, 31.0, 32.0]
    )  # fmt: skip
    assert (t_before.tolist(), value_before.tolist()) == ([1.0, 3.0, 3.0], [10.0, 30.0, 31.0])


def test_the_gaps_median_is_the_medians_float() -> None:
    rng = random.Random(7)
    for size in (1, 2, 3, 4, 10, 101):
        t = np.cumsum([rng.choice((0.0, 0.5, 1.0, 1.1, 2.0, 3.3)) for _ in range(size)])
        gaps = GapMedian()
        for gap in np.diff(t).tolist():
            gaps.add(gap)
        expected = median(np.diff(t)) if size > 1 else None
        assert gaps.median() == expected == GapMedian(t).median()


# --- the old way, as summary.py figured it before: every reading masked and sorted anew ----


def _order(t: np.ndarray) -> np.ndarray:
    return np.argsort(t, kind="stable")


def _samples(t: np.ndarray, value: np.ndarray) -> Samples:
    present = ~np.isnan(t) & ~np.isnan(value)
    t, value = t[present], value[present]
    order = _order(t)
    gaps = np.diff(t[order])
    return Samples(t[order], value[order], 2 * median(gaps) if len(gaps) else 0.0)


def _number(value: object) -> float:
    return float(value) if isinstance(value, float) and np.isfinite(value) else np.nan


def old_arrays(session: Session) -> ReadingArrays:
    """What `EnergyReadings.arrays` gave when it copied and sorted all readings."""
    events = list(session.telemetry)
    t = np.array([_number(e.t) for e in events])
    power_w = np.array([_number(e.power_w) for e in events])
    plugged = np.array(
        [e.charging is True or e.plugged is True or e.battery_state in ("charging", "full")
         for e in events], dtype=bool)  # fmt: skip
    power = _samples(np.where(plugged, np.nan, t), power_w)
    battery_t, battery = np.array(session.battery.t), np.array(session.battery.value)
    by_time = _order(battery_t)
    return ReadingArrays(
        plugged_t=np.sort(t[plugged & ~np.isnan(t)]),
        power_t=power.t, power_w=power.value, hold_s=power.hold_s,
        battery_t=battery_t[by_time], battery=battery[by_time],
        load=LoadSteps.of(t, np.array([_number(e.load_w) for e in events]),
                          np.array([_number(e.load_changed_t) for e in events])),
        process={name: _samples(t, np.array([_number(getattr(e, name)) for e in events]))
                 for name in PROCESS_FIELDS},
    )  # fmt: skip


def generated(seed: int, late: bool = True) -> list[Event]:
    """A session of trials and readings: some late (unless not `late`: a whole file's
    readings then come in order, read at once), some at equal times, some without power or
    with an infinite one, some charging (with a system load, or said by the battery state
    alone), some with the app's process."""
    rng = random.Random(seed)
    events: list[Event] = []
    t = 0.0
    for i in range(400):
        t += rng.choice((0.0, 0.5, 1.0, 1.0, 1.0, 1.5))
        at = t - (rng.choice((0.0, 0.0, 0.0, 0.0, 2.5, 7.0)) if late else 0.0)
        charging = i >= 300 and rng.random() < 0.7  # the last arm's
        events.append(TelemetryEvent(
            t=at, wall=at, power_w=rng.choice((None, 2.5 + rng.random(), float("inf"))),
            battery_state=rng.choice((None, "unplugged", "full" if i > 350 else None)),
            charging=charging, plugged=charging, battery=rng.choice((None, 90.0 - i / 50)),
            load_w=4.0 + rng.random() if charging else None,
            load_changed_t=rng.choice((at, at - 5.0, at // 10 * 10, None)) if charging else None,
            mem_gb=rng.choice((None, 1.0 + rng.random())), cpu_pct=rng.choice((None, 95.0)),
            gpu_pct=rng.choice((None, 10.0 * rng.random())),
        ))  # fmt: skip
        if i % 5 == 0:
            events.append(TrialEvent(
                t=t, wall=t, arm=f"arm{i // 100}", trial=i, decode_tps=50.0, gen=100,
                battery=90.0 - i / 50, battery_state="unplugged", thermal=1,
            ))  # fmt: skip
    return events


def assert_same(new: ReadingArrays, old: ReadingArrays) -> None:
    for name in ("plugged_t", "power_t", "power_w", "battery_t", "battery"):
        assert np.array_equal(getattr(new, name), getattr(old, name), equal_nan=True), name
    assert new.hold_s == old.hold_s
    for name in ("t", "w", "seen_t"):
        assert np.array_equal(getattr(new.load, name), getattr(old.load, name)), name
    assert (new.load.hold_s, new.load.refresh_s) == (old.load.hold_s, old.load.refresh_s)
    for name, samples in new.process.items():
        was = old.process[name]
        assert np.array_equal(samples.t, was.t) and np.array_equal(samples.value, was.value)
        assert samples.hold_s == was.hold_s, name


def test_the_arrays_are_the_old_ways_read_at_once_or_as_they_came() -> None:
    for seed in range(6):
        events = generated(seed)
        session, live = Session(), EnergyReadings()
        for i, event in enumerate(events):
            session.add(event)
            if i % 7 == 0:  # the live table reads every second, a few readings each time
                live.update(session)
                assert_same(live.arrays, old_arrays(session))
        live.update(session)
        assert_same(live.arrays, old_arrays(session))
        assert_same(EnergyReadings.of(session).arrays, old_arrays(session))


def test_a_whole_files_readings_in_order_are_read_at_once_as_they_came_one_by_one() -> None:
    """In order, a whole file's readings are copied into the buffers at once (and the gaps'
    median taken from every time): the same arrays as the old way's, and as read one by
    one."""
    for seed in range(4):
        session = Session.from_events(generated(seed, late=False))
        one_by_one, grown = EnergyReadings(), Session()
        for event in session.telemetry:
            grown.add(event)
            one_by_one.update(grown)
        at_once = EnergyReadings.of(session).arrays
        assert_same(at_once, old_arrays(session))
        assert_same(one_by_one.arrays, old_arrays(grown))


def test_a_time_series_extended_is_the_one_added_to_one_by_one() -> None:
    rng = np.random.default_rng(3)
    for ordered in (True, False):
        t = np.cumsum(rng.choice([0.0, 0.5, 1.0, 2.0], 500))
        if not ordered:
            t[rng.choice(500, 20)] -= 5.0
        value = rng.random(500)
        extended, added = TimeSeries(), TimeSeries()
        extended.add(-1.0, 0.0)
        added.add(-1.0, 0.0)
        extended.extend(t, value)
        for one, v in zip(t.tolist(), value.tolist(), strict=True):
            added.add(one, v)
        assert extended.t.tolist() == added.t.tolist()
        assert extended.value.tolist() == added.value.tolist()
        assert extended.hold_s == added.hold_s
        for one in (t[-1] + 0.25, t[-1] + 3.0, t[-1] - 1.0):  # then one at a time again
            extended.add(one, 0.0)
            added.add(one, 0.0)
            assert extended.hold_s == added.hold_s
        extended.extend(t + t[-1] + 5.0, value)  # and in bulk again
        for one, v in zip((t + t[-1] + 5.0).tolist(), value.tolist(), strict=True):
            added.add(one, v)
        assert extended.hold_s == added.hold_s


def test_the_figures_of_generated_sessions_are_the_old_ways() -> None:
    for seed in range(6):
        session = Session.from_events(generated(seed))
        new = EnergyReadings.of(session)
        old = EnergyReadings()
        old._arrays = old_arrays(session)  # the figures read through `arrays`, as given here
        figured = 0
        for arm in session.arms.values():
            spans, tokens = Spans.of(arm), 100 * len(arm)
            assert energy_figures(spans, new, tokens) == energy_figures(spans, old, tokens)
            assert process_figures(spans, new) == process_figures(spans, old)
            figured += energy_figures(spans, new, tokens).energy_j is not None
        assert figured  # some arm has figures, not only notes


def test_a_value_between_readings_is_np_interps_over_them_all() -> None:
    """`_value_at` interpolates over the two readings around a time only: the same float as
    np.interp over every reading, at a reading's own time, between, and at equal times."""
    rng = random.Random(3)
    t = np.cumsum([rng.choice((0.0, 0.5, 1.0, 1.7)) for _ in range(300)])
    value = np.array([rng.choice((-1.0, 2.5, 3.0 + rng.random())) for _ in range(300)])
    samples = Samples(t, value, 0.0)
    times = [*t.tolist(), *(t[:-1] + np.diff(t) * rng.random()).tolist(), t[0], t[-1]]
    for at in times:
        assert _value_at(samples, at) == float(np.interp(at, t, value))


def test_readings_called_settled_for_an_arm_leave_its_figures_as_they_were() -> None:
    """What the live arms table keeps instead of recomputing (`EnergyReadings.settled`): each
    arm's figures at every update, checked at every later one that calls them settled, on
    generated sessions with late readings, readings at the spans' ends, and a system load."""
    kept = changed = 0
    for seed in range(6):
        session, live = Session(), EnergyReadings()
        figured: list[tuple[ReadingsMark, Spans, object, object]] = []
        for i, event in enumerate(generated(seed)):
            session.add(event)
            if i % 3:
                continue
            live.update(session)
            for mark, spans, energy, process in figured:
                if live.settled(mark, spans):
                    kept += 1
                    assert energy_figures(spans, live, 100) == energy
                    assert process_figures(spans, live) == process
                else:
                    changed += energy_figures(spans, live, 100) != energy
            mark = live.mark()
            figured += [
                (mark, spans, energy_figures(spans, live, 100), process_figures(spans, live))
                for spans in map(Spans.of, session.arms.values())
            ]
    assert kept > 1000 and changed  # both kinds happen: the check is not vacuous


def _figures_then_and_now(
    before: list[TelemetryEvent], after: list[TelemetryEvent], spans: Spans
) -> tuple[bool, Energy, Energy]:
    session, live = Session(), EnergyReadings()
    for event in before:
        session.add(event)
    live.update(session)
    mark, then = live.mark(), energy_figures(spans, live, 100)
    for event in after:
        session.add(event)
    live.update(session)
    return live.settled(mark, spans), then, energy_figures(spans, live, 100)


def test_later_readings_that_change_the_hold_leave_no_arm_settled() -> None:
    # power at 10, 11, 12.5: held 2.5 s, so the span's start at 7 has no value; readings at 20
    # and 30, all after the span, make the median gap 4.5: held 9 s, the start has one
    spans = Spans(bounds=((7.0, 12.0),), plugged=False)
    settled, then, now = _figures_then_and_now(
        [reading(t) for t in (10.0, 11.0, 12.5)], [reading(t) for t in (20.0, 30.0)], spans
    )
    assert (then.energy_note, now.energy_source) == ("span too short", "battery")
    assert not settled


def test_later_readings_of_the_system_load_leave_no_arm_settled() -> None:
    # the load's note says its refresh over the whole session: readings long after the span
    # change it
    def load(t: float, changed: float) -> TelemetryEvent:
        return TelemetryEvent(t=t, wall=t, load_w=4.0, load_changed_t=changed, plugged=True)

    spans = Spans(bounds=((2.0, 6.0),), plugged=True)
    early = [load(t, t // 2 * 2) for t in range(1, 9)]  # a change every 2 s
    late = [load(t, t // 20 * 20) for t in range(20, 200)]  # then every 20 s
    settled, then, now = _figures_then_and_now(early, late, spans)
    assert then.energy_note != now.energy_note
    assert not settled


def test_a_late_battery_reading_inside_the_span_leaves_no_arm_settled() -> None:
    # no power (devicectl): the battery's drop is the only figure, and a reading that comes
    # late at the span's end changes it
    def battery(t: float, pct: float) -> TelemetryEvent:
        return TelemetryEvent(t=t, wall=t, battery=pct)

    spans = Spans(bounds=((0.0, 10.0),), plugged=False)
    settled, then, now = _figures_then_and_now(
        [battery(t, 90.0 - t) for t in range(13)], [battery(10.0, 50.0)], spans
    )
    assert then.tokens_per_battery_pct != now.tokens_per_battery_pct
    assert not settled
