"""The recording's fast path (orjson, per-shape plans, events made through their slots) gives
exactly what the general path gives: the same JSON values, the same events, the same warnings."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anemon.events import EVENT_TYPES, Event, TelemetryEvent, TrialEvent
from anemon.recording import codec
from anemon.recording.codec import _from_record, decode, from_record, read_fast
from anemon.recording.reader import open_source
from anemon.recording.writer import make_header


def same(a: Any, b: Any) -> bool:
    """Equal, with the same types all the way down (1 is not 1.0), NaN equal to NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(same, a, b))
    return bool(a == b)


def json_decode(text: str) -> Any:
    return json.loads(text, parse_int=codec._parse_int)


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**62, max_value=2**80),
    st.integers(min_value=-(2**80), max_value=-(2**62)),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=1e18, max_value=1e20),
    st.text(max_size=8),
    st.sampled_from(["nominal", "Fair", "SERIOUS", "critical", "hot", ""]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
ALL_FIELDS = sorted({f.name for cls in EVENT_TYPES.values() for f in dataclasses.fields(cls)})
KEYS = st.sampled_from([*ALL_FIELDS, "kind", "zzz", "Trial"])


@st.composite
def records(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from([*EVENT_TYPES, "trial", "trial", "telemetry", "nope", 3, None]))
    cls = EVENT_TYPES.get(kind) if isinstance(kind, str) else None
    names = [f.name for f in dataclasses.fields(cls)] if cls else ALL_FIELDS
    # mostly valid-looking records of the class, some damage, in any key order
    record: dict[str, Any] = {"kind": kind, "t": draw(st.floats(0, 1e6) | SCALARS)}
    for key in draw(st.lists(st.sampled_from(names) | KEYS, max_size=8, unique=True)):
        record[key] = draw(_plausible(key) | VALUES)
    if draw(st.booleans()):
        record.pop("t", None)
    return record


def _plausible(key: str) -> st.SearchStrategy[Any]:
    if key == "thermal":
        return st.sampled_from(["nominal", "fair", "serious", "critical", 0, 2])
    if key == "battery_state":
        return st.sampled_from(["charging", "Unplugged", "FULL", "unknown", "docked"]) | st.text(
            max_size=6
        )
    if key in ("arm", "phase", "message", "reason", "model"):
        return st.text(max_size=6)
    return st.floats(0, 1000) | st.integers(0, 10**6) | st.booleans()


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_decode_reads_every_json_value_as_json_does(value):
    text = json.dumps(value)  # NaN and Infinity written as json writes them
    assert same(decode(text), json_decode(text))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='{}[]":,0123456789.eE+-nulltruefalseNaInfiy \\ud8', max_size=30))
def test_decode_accepts_and_refuses_what_json_does(text):
    try:
        expected = json_decode(text)
    except ValueError:
        with pytest.raises(ValueError):
            decode(text)
        return
    assert same(decode(text), expected)


@pytest.mark.parametrize(
    "text",
    ['{"gen": 18446744073709551616}', '{"gen": -9223372036854775809}', '{"t": 1e400}',
     '{"t": NaN}', '{"a": "\\ud800"}', '{"a": [1e19, 123456789012345678901234]}'],
)  # fmt: skip
def test_decode_reads_what_orjson_would_read_otherwise_as_json_does(text):
    assert same(decode(text), json_decode(text))


@settings(max_examples=500, deadline=None)
@given(records())
def test_from_record_fast_path_gives_the_general_paths_event_and_warnings(record):
    told: list[str] = []
    expected_told: list[str] = []
    event = from_record(record, "x", told.append)
    expected = _from_record(record, "x", expected_told.append)
    assert type(event) is type(expected)
    assert repr(event) == repr(expected)
    assert told == expected_told


@settings(max_examples=500, deadline=None)
@given(records())
def test_read_fast_gives_from_record_of_decode_or_nothing(record):
    text = json.dumps(record)
    fast = read_fast(text, "x")
    if fast is None:
        return
    told: list[str] = []
    expected = _from_record(json_decode(text), "x", told.append)
    assert repr(fast) == repr(expected) and not told


def test_read_fast_takes_the_common_lines():
    trial = {"kind": "trial", "t": 1.5, "wall": 2, "arm": "a", "trial": 3, "decode_tps": 50.0,
             "gen": 256, "thermal": "fair"}  # fmt: skip
    event = read_fast(json.dumps(trial), "x")
    assert event == TrialEvent(t=1.5, wall=2.0, arm="a", source="x", trial=3, decode_tps=50.0,
                               gen=256, thermal=1)  # fmt: skip
    assert dataclasses.replace(event) == event  # every field set, as __init__ sets them
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.gen = 1  # type: ignore[misc]
    telemetry = {"kind": "telemetry", "t": 2, "wall": 3, "power_w": 4.5, "battery": 80}
    assert isinstance(read_fast(json.dumps(telemetry), "x"), TelemetryEvent)


@pytest.mark.parametrize(
    "text",
    ['{"kind": "trial", "wall": 1}', '{"kind": "trial", "t": 1, "gen": -1}',
     '{"kind": "trial", "t": 1, "gen": "256"}', '{"kind": "trial", "t": 1, "zz": 1}',
     '{"kind": "trial", "t": 1, "thermal": "hot"}', '{"kind": "trial", "t": NaN}',
     '{"kind": "trial", "t": 1, "gen": 10000000000000000000000}', '[1]', '', 'nope',
     '{"kind": ["trial"], "t": 1}', '{"kind": "trial", "t": 1, "arm": 5}'],
)  # fmt: skip
def test_read_fast_leaves_anything_unusual_to_the_general_path(text):
    assert read_fast(text, "x") is None


@settings(max_examples=40, deadline=None)
@given(st.lists(records(), min_size=1, max_size=30), st.data())
def test_a_recording_reads_the_same_through_both_paths(tmp_path_factory, rows, data):
    lines = [json.dumps(row) for row in rows]
    for index in data.draw(st.lists(st.integers(0, len(lines) - 1), max_size=3)):
        lines[index] = data.draw(st.sampled_from(["", "not json", "[1, 2]", '{"kind": "tr']))
    path: Path = tmp_path_factory.mktemp("rec") / "r.jsonl"
    path.write_text(json.dumps(make_header("x")) + "\n" + "\n".join(lines))
    fast = open_source(path)
    fast_events = list(fast)
    slow = open_source(path)
    with pytest.MonkeyPatch.context() as patch:
        slow_events = list(slow_path(slow, patch))
    assert [repr(e) for e in fast_events] == [repr(e) for e in slow_events]
    assert (fast.warnings, fast.torn, fast.unsorted) == (slow.warnings, slow.torn, slow.unsorted)
    assert fast.listed == slow.listed


RECORDINGS = Path(__file__).parents[2] / "recordings"


def slow_path(source: Iterable[Event], patch: pytest.MonkeyPatch) -> Iterator[Event]:
    """`source`'s events with the fast path refused for every line (the reader imports
    `read_fast` from codec as it starts reading, so codec's name is the one to replace);
    fails if an event came out but no line went through the replacement (the patch missed)."""
    taken: list[str] = []

    def refused(text: str, source: str = "") -> None:
        taken.append(text)

    patch.setattr(codec, "read_fast", refused)
    events = list(source)
    assert taken or not events, "the fast path was not replaced: it is compared with itself"
    yield from events


@pytest.mark.parametrize("path", sorted(RECORDINGS.glob("*.jsonl")))
def test_sample_recordings_read_the_same_through_both_paths(path: Path, monkeypatch):
    fast = open_source(path)
    fast_events = [repr(event) for event in fast]
    slow = open_source(path)
    assert fast_events == [repr(event) for event in slow_path(slow, monkeypatch)]
    assert (fast.warnings, fast.listed, fast.unsorted) == (
        slow.warnings,
        slow.listed,
        slow.unsorted,
    )
