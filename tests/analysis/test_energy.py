"""The energy figures of the per-arm summary (line-protocol.md "Sustained and energy figures",
energy rules version 3), one rule a test, on hand-made sessions with known numbers."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from anemon.analysis import render
from anemon.analysis.load import load_sessions
from anemon.analysis.summary import ArmSummary, EnergyReadings, Spans, summarize, with_energy
from anemon.events import Event, LoadEvent, StartEvent, TelemetryEvent, TrialEvent
from anemon.recording.reader import SourceReader
from anemon.recording.writer import Recorder, make_header
from anemon.store import Session
from anemon.store.readings import Readings

ENERGY_KEYS = ("power_w_mean", "energy_j", "j_per_token", "tokens_per_battery_pct", "energy_note")
NULL_ENERGY = dict.fromkeys(ENERGY_KEYS)


def start(t: float, arm: str = "a") -> StartEvent:
    return StartEvent(t=t, wall=t, arm=arm, line=f"START arm={arm}")


def load(t: float, arm: str = "a") -> LoadEvent:
    return LoadEvent(t=t, wall=t, arm=arm, line=f"LOAD arm={arm}")


def trial(
    t: float, battery: float = 90.0, *, arm: str = "a", gen: int = 100, warmup: bool = False,
    state: str | None = "unplugged",
) -> TrialEvent:  # fmt: skip
    return TrialEvent(
        t=t, wall=t, arm=arm, trial=int(t), warmup=warmup, decode_tps=50.0, gen=gen,
        battery=battery, battery_state=state, thermal=1,
    )  # fmt: skip


def power(
    t: float, watts: float | None, *, charging: bool | None = False,
    plugged: bool | None = False, state: str | None = None,
) -> TelemetryEvent:  # fmt: skip
    return TelemetryEvent(
        t=t, wall=t, power_w=watts, charging=charging, plugged=plugged, battery_state=state
    )


def energy(events: list[Event]) -> dict[str, object]:
    (summary,) = summarize(Session.from_events(events))
    return {key: getattr(summary, key) for key in ENERGY_KEYS}


# Three timed trials of 100 tokens at t = 20, 30, 40 (battery 90 -> 88), after a warm-up at 10
# (battery 90), so the span is 10-40; power 2 W at 10, then 4 W at 20, 30 and 40, and 100 W
# outside the span (at 2 and 45).
SPAN = [
    start(0.0), power(2.0, 100.0), trial(10.0, 90.0, warmup=True), power(10.0, 2.0),
    trial(20.0, 90.0), power(20.0, 4.0), power(30.0, 4.0), trial(30.0, 89.0), trial(40.0, 88.0),
    power(40.0, 4.0), power(45.0, 100.0),
]  # fmt: skip


def test_mean_trapezoid_and_per_token_over_the_span_only():
    assert energy(SPAN) == {
        "power_w_mean": pytest.approx(110 / 30),  # time-weighted: the 100 W outside ignored
        "energy_j": 110.0,  # (2 + 4) / 2 x 10 + 4 x 10 + 4 x 10
        "j_per_token": 0.3667,  # 110 / 300, four decimals
        "tokens_per_battery_pct": 150.0,  # 300 tokens / (90 - 88)
        "energy_note": None,
    }


@pytest.mark.parametrize(
    ("before", "begins"),
    [
        ([start(0.0), load(4.0), trial(8.0, warmup=True)], 8.0),
        ([start(0.0), load(4.0)], 4.0),
        ([start(0.0)], 0.0),
        ([], 10.0),
    ],
    ids=["its warm-up", "its LOAD", "its START", "none: the trial itself"],
)
def test_a_span_begins_at_the_line_before_the_first_timed_trial(before, begins):
    session = Session.from_events([*before, trial(10.0), trial(20.0)])
    assert Spans.of(session.arms["a"]).bounds == ((begins, 20.0),)


def test_every_counted_token_is_inside_the_span_at_constant_power():
    """The rule's point: n timed trials of 10 s at a constant 5 W after a warm-up give
    5 W x 10 s x n over n trials' tokens (version 2 covered n - 1 of them)."""
    events: list[Event] = [start(0.0), trial(10.0, warmup=True)]
    events += [trial(10.0 + 10 * k) for k in range(1, 6)]
    events += [power(float(t), 5.0) for t in range(0, 61)]
    figures = energy(sorted(events, key=lambda e: e.t))
    assert figures["energy_j"] == 250.0 and figures["j_per_token"] == 0.5  # 250 J / 500 tokens
    assert figures["power_w_mean"] == pytest.approx(5.0)


def test_the_power_at_a_span_end_is_interpolated_between_the_readings_around_it():
    events = [power(0.0, 2.0), trial(5.0, warmup=True), trial(15.0), power(20.0, 6.0)]
    figures = energy(events)  # 3 W at 5, 5 W at 15: (3 + 5) / 2 x 10
    assert (figures["energy_j"], figures["power_w_mean"]) == (40.0, pytest.approx(4.0))


@pytest.mark.parametrize(("last", "joules"), [(38.0, 80.0), (37.0, None)], ids=["2 s", "3 s"])
def test_the_nearest_reading_is_held_at_most_twice_the_interval(last, joules):
    """Readings every 1 s (power_s 1) that stop before the span's end: held for 2 s at most."""
    events = [trial(20.0, warmup=True), trial(40.0)]
    events += [power(float(t), 4.0) for t in range(20, int(last) + 1)]
    figures = energy(sorted(events, key=lambda e: e.t))
    assert figures["energy_j"] == joules
    assert figures["energy_note"] == (None if joules else "span too short")


def test_energy_is_rounded_to_one_decimal_and_j_per_token_to_four():
    events = [trial(0.0), power(0.0, 1.0), power(0.3, 1.0), trial(0.3, gen=7)]
    figures = energy(events)
    assert figures["energy_j"] == 0.3  # 0.3 J exactly: no float noise
    assert figures["j_per_token"] == round(0.3 / 107, 4) == 0.0028


CHARGING = {
    "sample charging": [power(20.0, 4.0, charging=True)],
    "sample plugged": [power(20.0, 4.0, plugged=True)],
    "sample plugged, no power": [power(20.0, None, charging=None, plugged=True)],
    "v1 sample battery_state charging": [power(20.0, 4.0, charging=None, plugged=None,
                                               state="charging")],
    "v1 sample battery_state full": [power(20.0, 4.0, charging=None, plugged=None,
                                           state="full")],
    "trial says charging": [trial(25.0, 88.0, state="charging")],
    "trial says full": [trial(25.0, 88.0, state="full")],
}  # fmt: skip


@pytest.mark.parametrize("extra", CHARGING.values(), ids=CHARGING.keys())
def test_a_charging_span_gives_no_energy_figure_at_all(extra):
    events = sorted(SPAN + extra, key=lambda e: e.t)
    assert energy(events) == NULL_ENERGY | {"energy_note": "charging"}


@pytest.mark.parametrize("t", [5.0, 45.0], ids=["before", "after"])
def test_charging_outside_the_span_does_not_count(t):
    events = sorted([*SPAN, power(t, 4.0, charging=True, plugged=True)], key=lambda e: e.t)
    figures = energy(events)
    assert figures["energy_note"] is None and figures["energy_j"] == 110.0


def test_a_charging_warmup_does_not_count():
    events = [e if not (isinstance(e, TrialEvent) and e.warmup) else trial(10.0, warmup=True,
              state="charging") for e in SPAN]  # fmt: skip
    assert energy(events)["energy_note"] is None


@pytest.mark.parametrize(
    ("end", "expected"),
    [(89.5, None), (90.0, None), (91.0, None), (89.0, 300.0), (87.5, 120.0)],
    ids=["drop 0.5", "no drop", "a rise", "drop 1", "drop 2.5"],
)
def test_tokens_per_battery_pct_needs_a_drop_of_at_least_one(end, expected):
    events = [trial(10.0, 90.0), power(10.0, 2.0), trial(20.0, 90.0), trial(30.0, end),
              power(30.0, 2.0)]  # fmt: skip
    assert energy(events)["tokens_per_battery_pct"] == expected


def test_tokens_per_battery_pct_without_a_battery_reading_is_null():
    events = [trial(10.0, float("nan")), trial(20.0, float("nan"))]
    assert energy(events)["tokens_per_battery_pct"] is None


def test_no_power_samples_still_gives_the_battery_metric():
    events = [trial(10.0, 90.0), trial(20.0, 89.0), trial(30.0, 88.0)]
    assert energy(events) == NULL_ENERGY | {
        "tokens_per_battery_pct": 150.0,
        "energy_note": "no power samples",
    }


@pytest.mark.parametrize(
    ("samples", "note"),
    [
        ([], "no power samples"),
        ([power(20.0, None), power(25.0, None)], "no power samples"),  # an older iOS
        ([power(100.0, 3.0), power(130.0, 3.0)], "no power samples"),  # far from the span
        ([power(20.0, 3.0)], "span too short"),
        ([power(20.0, 3.0), power(25.0, None)], "span too short"),
    ],
    ids=["none", "power_w null", "far", "one sample", "one with power"],
)
def test_why_the_power_figures_are_withheld(samples, note):
    events = sorted([trial(10.0), trial(20.0), trial(30.0), *samples], key=lambda e: e.t)
    figures = energy(events)
    assert figures["energy_note"] == note
    assert (figures["power_w_mean"], figures["energy_j"], figures["j_per_token"]) == (None,) * 3


def test_readings_around_the_span_give_its_ends():
    events = [power(5.0, 3.0), trial(10.0), trial(20.0), trial(30.0), power(35.0, 3.0)]
    assert energy(events)["energy_j"] == 60.0  # 3 W at 10 and 30, interpolated


def test_an_arm_without_timed_trials_has_no_power_samples():
    events = [start(0.0), power(1.0, 3.0), trial(2.0, warmup=True), power(3.0, 3.0)]
    assert energy(events) == NULL_ENERGY | {"energy_note": "no power samples"}


def test_the_span_ends_are_included():
    events = [trial(10.0), power(10.0, 3.0), power(30.0, 3.0), trial(30.0)]
    assert energy(events)["energy_j"] == 60.0


def test_several_rounds_add_up_and_the_gap_between_them_is_not_counted():
    events = [
        start(0.0), trial(10.0, 90.0, warmup=True), power(10.0, 2.0), power(20.0, 2.0),
        trial(20.0, 90.0),
        power(50.0, 99.0),  # between the rounds: another arm, or the cooldown
        start(60.0), trial(100.0, 89.0, warmup=True), power(100.0, 4.0), power(110.0, 6.0),
        trial(110.0, 88.0),
    ]  # fmt: skip
    (s,) = summarize(Session.from_events(events))
    assert [r.trials for r in s.rounds] == [1, 1]
    assert s.power_w_mean == pytest.approx(3.5)  # 70 J over 20 s
    assert s.energy_j == 70.0  # 20 (round 1, 10-20) + 50 (round 2, 100-110)
    assert s.j_per_token == 0.35  # 70 / 200
    assert s.tokens_per_battery_pct == 200.0  # drops 0 and 1
    assert s.energy_note is None


def test_a_round_whose_end_has_no_power_withholds_the_figures():
    """Readings every 1 s in the first round, none near the second's end: its joules would be
    missing while its tokens count, so no figure at all."""
    events: list[Event] = [trial(10.0), *(power(float(t), 2.0) for t in range(10, 21))]
    events += [trial(20.0), start(100.0), trial(100.0), power(100.0, 8.0), trial(110.0)]
    figures = energy(sorted(events, key=lambda e: e.t))
    assert figures == NULL_ENERGY | {"energy_note": "span too short"}


def test_an_interleaved_arm_counts_only_its_own_rounds_battery_drop():
    """A-B-A-B where the battery drops only during b's rounds: a's figure is null, never
    the drop across b's rounds."""
    events = []
    for k, (base, name) in enumerate([(0, "a"), (100, "b"), (200, "a"), (300, "b")]):
        level = 90.0 - 2 * (k // 2)  # what b leaves: 90, 90, 88, 88 at each round's start
        end = level - 2 if name == "b" else level
        events += [
            start(base, name), trial(base + 10.0, level, arm=name, warmup=True),
            trial(base + 20.0, level, arm=name), trial(base + 30.0, end, arm=name),
        ]  # fmt: skip
    a, b = summarize(Session.from_events(events))
    assert a.tokens_per_battery_pct is None  # its own rounds: no drop
    assert b.tokens_per_battery_pct == 100.0  # 400 tokens over 2 + 2


def test_a_charging_sample_in_any_round_withholds_every_figure():
    events = [
        start(0.0), trial(10.0), power(10.0, 2.0), power(20.0, 2.0), trial(20.0),
        start(60.0), trial(100.0), power(105.0, 8.0, charging=True), trial(110.0),
    ]  # fmt: skip
    assert energy(events) == NULL_ENERGY | {"energy_note": "charging"}


def test_each_arm_has_its_own_span():
    events = [
        start(10.0, "a"), trial(10.0, arm="a"), power(10.0, 2.0), power(20.0, 2.0),
        trial(20.0, arm="a"), start(30.0, "b"), trial(40.0, arm="b"), power(40.0, 5.0),
        power(45.0, 5.0, charging=True), power(50.0, 5.0), trial(50.0, arm="b"),
    ]  # fmt: skip
    a, b = summarize(Session.from_events(events))
    assert (a.energy_j, a.energy_note) == (20.0, None)
    assert (b.energy_j, b.energy_note) == (None, "charging")


def test_a_damaged_reading_is_no_sample_never_an_error():
    telemetry = [
        TelemetryEvent(t=1.0, wall=1.0, power_w=float("inf")),
        TelemetryEvent(t=2.0, wall=2.0, power_w="3.5"),
        TelemetryEvent(t=3.0, wall=3.0, battery_state=["charging"]),
    ]
    held = Readings()  # as they came, whatever a reader let through
    for event in telemetry:
        held.append(event)
    assert list(held) == telemetry
    session = Session(telemetry=held)
    readings = EnergyReadings.of(session)
    assert readings.read == 3 and not len(readings.arrays.power_w)
    assert not len(readings.arrays.plugged_t)


def test_a_charging_reading_gives_no_power_to_hold_or_interpolate():
    """A reading while charging is the charger's current: outside the span it is no reading."""
    events = [trial(10.0), trial(20.0), power(21.0, 9.0, charging=True, plugged=True)]
    assert energy(events)["energy_note"] == "no power samples"


def test_the_live_refresh_of_the_energy_figures_matches_the_whole_summary():
    session = Session.from_events(SPAN)
    (whole,) = summarize(session)
    stale = dataclasses.replace(whole, **NULL_ENERGY)  # as the live table held it
    spans = Spans.of(session.arms["a"])
    assert spans == Spans(((10.0, 40.0),), plugged=False)
    assert with_energy(stale, spans, EnergyReadings.of(session)) == whole


def test_readings_are_read_once_as_they_come():
    session = Session()
    readings = EnergyReadings()
    for event in [power(1.0, 2.0), power(2.0, None, charging=True), trial(2.5, 80.0),
                  power(3.0, 4.0)]:  # fmt: skip
        session.add(event)
        readings.update(session)
    a = readings.arrays
    assert readings.read == 3 and a.plugged_t.tolist() == [2.0]
    assert (a.power_t.tolist(), a.power_w.tolist()) == ([1.0, 3.0], [2.0, 4.0])
    assert (a.battery_t.tolist(), a.battery.tolist()) == ([2.5], [80.0])


# --- renderings -----------------------------------------------------------------------------


def summaries() -> list[ArmSummary]:
    """Arm "ane" with figures, arm "gpu" charging, arm "cpu" with no power samples."""
    events = [
        start(10.0, "ane"), trial(10.0, 90.0, arm="ane"), power(10.0, 3.0), power(20.0, 3.5),
        trial(20.0, 89.0, arm="ane"), start(30.0, "gpu"), trial(40.0, arm="gpu"),
        power(40.0, 6.0, charging=True, plugged=True), trial(50.0, arm="gpu"),
        start(60.0, "cpu"), trial(70.0, arm="cpu"), trial(80.0, arm="cpu"),
    ]  # fmt: skip
    return summarize(Session.from_events(events))


def test_markdown_shows_w_mean_and_j_per_token_or_why_not():
    lines = render.markdown(summaries()).splitlines()
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    assert header[-2:] == ["power W", "J/token"]
    rows = {line.split("|")[1].strip(): line for line in lines[2:5]}  # then the notes
    assert rows["ane"].endswith("| 3.25 | 0.1625 |")  # 32.5 J / 200 tokens
    assert rows["gpu"].endswith("| — | charging |")
    assert rows["cpu"].endswith("| — | no power samples |")


def test_markdown_says_devicectl_reads_no_power():
    assert "devicectl reads no power" in render.markdown(summaries(), device="devicectl")
    assert "reads no power" not in render.markdown(summaries(), device="pymobiledevice3")
    assert "reads no power" not in render.markdown(summaries()[:1], device="devicectl")


def test_json_carries_the_five_keys_with_the_spec_notes():
    objects = {o["arm"]: o for o in json.loads(render.to_json(summaries()))}
    assert {k: objects["ane"][k] for k in ENERGY_KEYS} == {
        "power_w_mean": 3.25, "energy_j": 32.5, "j_per_token": 0.1625,
        "tokens_per_battery_pct": 200.0, "energy_note": None,
    }  # fmt: skip
    assert {k: objects["gpu"][k] for k in ENERGY_KEYS} == NULL_ENERGY | {"energy_note": "charging"}
    assert objects["cpu"]["energy_note"] == "no power samples"


def test_csv_carries_the_five_keys():
    rows = {r["arm"]: r for r in csv.DictReader(io.StringIO(render.to_csv(summaries())))}
    assert {k: rows["ane"][k] for k in ENERGY_KEYS} == {
        "power_w_mean": "3.25", "energy_j": "32.5", "j_per_token": "0.1625",
        "tokens_per_battery_pct": "200.0", "energy_note": "",
    }  # fmt: skip
    assert (rows["gpu"]["energy_j"], rows["gpu"]["energy_note"]) == ("", "charging")


def printed(table: object, width: int) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(table)
    return console.export_text()


def test_the_table_shows_j_per_token_and_the_notes_when_wide():
    text = printed(render.rich_table(summaries(), title="run.jsonl"), 300)
    assert "J/token" in text and "power W" in text
    assert "0.1625" in text and "charging" in text and "no power samples" in text
    assert "not shown" not in text


@pytest.mark.parametrize("width", [80, 100, 120, 140])  # narrower, it folds (test_render.py)
def test_the_table_never_cuts_a_number_it_drops_columns(width):
    wide = [render.cells(s) for s in summaries()]
    text = printed(render.rich_table(summaries(), device="devicectl"), width)
    assert max(len(line) for line in text.splitlines()) <= width
    assert "…" not in text
    words = set(text.replace("│", " ").split())
    figures = {word for row in wide for cell in row for word in cell.split()}
    body = " ".join(line for line in text.splitlines() if line.startswith("│"))
    assert {w for w in body.replace("│", " ").split() if any(c.isdigit() for c in w)} <= figures
    j_per_token = render.COLUMNS.index("J/token")
    for row in wide:  # the arm's name and its J/token are always shown
        assert row[0] in words and row[j_per_token].split()[0] in words
    caption = " ".join(text.split()).partition("not shown (too narrow): ")[2]
    assert caption == "" or render.DROP_ORDER[0] in caption  # the first column to go
    assert "devicectl reads no power" in text


# --- from a recording -----------------------------------------------------------------------


def write_recording(path, events, device="pymobiledevice3"):
    header = make_header(source="test", device={"kind": device, "udid": "X", "name": "phone"})
    with Recorder(path, header) as recorder:
        for event in events:
            recorder.write(event)
    return path


def test_a_recording_keeps_its_power_samples_and_names_its_device(tmp_path):
    path = write_recording(tmp_path / "r.jsonl", SPAN, device="devicectl")
    (loaded,) = load_sessions([path])
    assert loaded.device == "devicectl"
    (s,) = summarize(loaded.session)
    assert (s.energy_j, s.j_per_token, s.energy_note) == (110.0, 0.3667, None)


@pytest.mark.parametrize(
    ("header", "kind"),
    [
        (None, None),
        ({"device": None, "plan": None}, None),
        ({"device": {"kind": "sim"}}, "sim"),
        ({"device": None, "plan": {"device": {"kind": "devicectl"}}}, "devicectl"),
        ({"device": "garbage", "plan": ["x"]}, None),
    ],
)
def test_device_kind_from_a_header(header, kind):
    reader = SourceReader(Path("r.jsonl"), "recording", header, compressed=False)
    assert reader.device_kind == kind
