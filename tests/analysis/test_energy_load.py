"""Energy with the cable in (issue 27): a charging span's figures from the phone's system load
(telemetry `load_w`, held between the phone's refreshes), on hand-made sessions with known
numbers; without it they are withheld as before, and never mixed with the battery's."""

from __future__ import annotations

import dataclasses
import json

import pytest

from anemon.analysis import compare, render
from anemon.analysis.load import load_sessions
from anemon.analysis.summary import summarize
from anemon.analysis.system_load import STALE_NOTE
from anemon.events import Event, TelemetryEvent
from anemon.store import Session
from tests.analysis.test_energy import ENERGY_KEYS, NULL_ENERGY, start, trial, write_recording

KEYS = (*ENERGY_KEYS, "energy_source")
NOTE = "from the phone's system load (plugged in; refreshed every 20 s)"


def reading(
    t: float, load_w: float | None, changed: float | None, *, plugged: bool = True,
    power_w: float | None = 5.0,
) -> TelemetryEvent:  # fmt: skip
    """The power poll's reading at `t`: charging (power_w is the charger's), the phone's load
    as it last changed at `changed`."""
    return TelemetryEvent(t=t, wall=t, power_w=power_w, charging=plugged, plugged=plugged,
                          load_w=load_w, load_changed_t=changed)  # fmt: skip


def readings(
    until: float, changes: list[tuple[float, float]], *, every: float = 5.0, plugged: bool = True
) -> list[Event]:
    """A reading every `every` s from 0 to `until`, each with the load of the last change at
    or before it (`changes`: time, watts)."""
    out: list[Event] = []
    t = 0.0
    while t <= until:
        at, watts = max((c for c in changes if c[0] <= t), default=changes[0])
        out.append(reading(t, watts, max(at, 0.0), plugged=plugged))
        t += every
    return out


def trials(state: str = "charging", at: tuple[float, ...] = (20.0, 30.0, 40.0)) -> list[Event]:
    """A warm-up at 10, then timed trials of 100 tokens: the span is 10 to the last."""
    return [trial(10.0, 90.0, warmup=True, state=state),
            *(trial(t, 90.0, state=state) for t in at)]  # fmt: skip


def figures(events: list[Event]) -> dict[str, object]:
    events = sorted(events, key=lambda e: e.t)
    (summary,) = summarize(Session.from_events(events))
    return {key: getattr(summary, key) for key in KEYS}


# The load changed at 5 (2 W), 25 (4 W) and 45 (9 W): the span 10-40 holds 2 W for 15 s and
# 4 W for 15 s (a step at 25, never a ramp from 2 to 4), 90 J over 300 tokens.
CHANGES = [(5.0, 2.0), (25.0, 4.0), (45.0, 9.0)]


def test_a_charging_span_has_its_figures_from_the_load_as_a_step_at_each_change():
    assert figures([start(0.0), *trials(), *readings(60.0, CHANGES)]) == {
        "power_w_mean": pytest.approx(3.0), "energy_j": 90.0, "j_per_token": 0.3,
        "tokens_per_battery_pct": None,  # the battery was charging: no battery-% figure
        "energy_note": NOTE, "energy_source": "system load",
    }  # fmt: skip


def test_without_the_load_a_charging_span_is_withheld_as_before():
    events = [start(0.0), *trials(), *readings(60.0, CHANGES)]
    without = [reading(e.t, None, None) if isinstance(e, TelemetryEvent) else e for e in events]
    assert figures(without) == NULL_ENERGY | {"energy_note": "charging", "energy_source": None}


def test_a_load_that_stops_inside_the_span_gives_no_figure():
    events = [start(0.0), *trials(), *readings(60.0, CHANGES)]
    stopped = [reading(e.t, None, None) if isinstance(e, TelemetryEvent) and 20 < e.t < 40
               else e for e in events]  # fmt: skip
    assert figures(stopped)["energy_note"] == "charging"


def test_a_value_held_for_an_hour_is_stale_and_says_so():
    late = (3700.0, 3710.0, 3720.0)
    events = [start(0.0), *trials(at=late)[1:], trial(3690.0, 90.0, warmup=True, state="charging"),
              *readings(3800.0, [(0.0, 3.0)], every=10.0)]  # fmt: skip
    assert figures(events) == NULL_ENERGY | {"energy_note": STALE_NOTE, "energy_source": None}


def test_an_unplugged_span_keeps_the_battery_figures_even_with_the_load():
    events = [start(0.0), *trials("unplugged"), *readings(60.0, CHANGES, plugged=False)]
    got = figures(events)
    assert (got["energy_source"], got["energy_note"], got["energy_j"]) == ("battery", None, 150.0)


def test_one_round_charging_and_one_not_are_one_source_or_none():
    second = [start(100.0), trial(110.0, 90.0, warmup=True), trial(120.0, 89.0),
              trial(130.0, 88.0)]  # fmt: skip
    plugged = readings(140.0, [*CHANGES, (105.0, 3.0)])
    got = figures([start(0.0), *trials(), *second, *plugged])
    assert got["energy_source"] == "system load"  # both spans from the load: 90 J + 60 J
    assert got["energy_j"] == 150.0
    on_battery = [e for e in plugged if e.t < 100] + [
        reading(e.t, None, None, plugged=False) for e in plugged if e.t >= 100
    ]  # the second round unplugged, without the load: its battery's would mix with the load
    assert figures([start(0.0), *trials(), *second, *on_battery])["energy_note"] == "charging"


def test_refresh_not_seen_with_one_change():
    got = figures([start(0.0), *trials(), *readings(50.0, [(0.0, 3.0)])])
    assert got["energy_j"] == 90.0
    assert got["energy_note"] == "from the phone's system load (plugged in; refresh not seen)"


def test_a_recording_drops_an_absurd_load_and_counts_it(tmp_path):
    events = [start(0.0), *trials(), *readings(60.0, CHANGES)]
    absurd = [reading(e.t, 45.0, e.t) if isinstance(e, TelemetryEvent) and e.t == 30 else e
              for e in sorted(events, key=lambda e: e.t)]  # fmt: skip
    (loaded,) = load_sessions([write_recording(tmp_path / "r.jsonl", absurd)])
    assert loaded.warnings == 1 and "load_w" in loaded.listed[0].what
    (s,) = summarize(loaded.session)
    assert (s.energy_j, s.energy_source) == (90.0, "system load")  # the held value stands


def test_table_json_and_compare_say_the_source(tmp_path):
    plugged = [start(0.0), *trials(), *readings(60.0, CHANGES)]
    unplugged = [start(0.0), *trials("unplugged"), *readings(60.0, CHANGES, plugged=False)]
    (load_arm,) = summarize(Session.from_events(sorted(plugged, key=lambda e: e.t)))
    (battery_arm,) = summarize(Session.from_events(sorted(unplugged, key=lambda e: e.t)))
    assert render.j_per_token(load_arm) == "0.3000 (load)"
    assert render.footnotes([load_arm]) == [f"J/token (load): {NOTE}: a"]
    many = [dataclasses.replace(load_arm, arm=f"arm{i}") for i in range(5)]
    assert render.footnotes([*many, battery_arm]) == [
        f"J/token (load): {NOTE}: arm0, arm1, arm2 and 2 more"
    ]
    assert json.loads(render.to_json([load_arm]))[0]["energy_source"] == "system load"
    sources = [compare.SourceArms("one", (battery_arm,), {}),
               compare.SourceArms("two", (load_arm,), {})]  # fmt: skip
    (arm,) = compare.compare(sources).arms
    assert arm.delta_pct["j_per_token"] == (None, None)  # two sources: no delta between them
    assert arm.delta_pct["decode_mean"] == (None, 0.0)
    row = compare.to_csv(compare.compare(sources)).splitlines()
    assert "energy_source" in row[0] and "system load" in row[2]
