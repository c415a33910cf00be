"""Hostile recordings (issue 15, classes 1, 2 and 7): any value in any field is read or left out
with a warning; what is written back is always valid JSON; a version that is not an integer is
refused in one line that says what it found."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anemon.analysis.describe import describe
from anemon.errors import SourceError
from anemon.events import (
    EVENT_TYPES,
    Check,
    CooldownEvent,
    MarkerEvent,
    PreflightEvent,
    TelemetryEvent,
    TrialEvent,
    UnknownEvent,
)
from anemon.recording.codec import decode, from_record, to_record
from anemon.recording.reader import open_source
from anemon.recording.writer import make_header
from anemon.store import Session
from anemon.text import printable
from tests.parsing.test_hostile import assert_sane

TRIAL = {"kind": "trial", "t": 1, "wall": 2, "arm": "a", "decode_tps": 5.0, "gen": 256}


def read(record: dict) -> tuple[object, list[str]]:
    told: list[str] = []
    return from_record(record, "x", told.append), told


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("decode_tps", math.inf),
        ("decode_tps", -1.0),
        ("prompt_tps", math.nan),
        ("gen", 10**23),
        ("gen", -5),
        ("trial", 2**63),
        ("battery", 100.5),
        ("free_gb", 1e308),
        ("app_t", -math.inf),
        ("warnings", -1),
    ],
)
def test_an_out_of_range_field_is_left_out_and_told(field, value):
    event, told = read(TRIAL | {field: value})
    assert isinstance(event, TrialEvent) and event.arm == "a"
    assert getattr(event, field) in (None, 1)  # warnings: the field left out, then counted
    assert event.warnings >= 1
    assert len(told) == 1 and told[0].startswith(f"trial: {field}=") and "outside" in told[0]


@pytest.mark.parametrize(("field", "value"), [("power_w", 1e9), ("temperature_c", math.inf),
                                              ("power_w", -3.0), ("total_gb", -1)])  # fmt: skip
def test_out_of_range_telemetry_is_left_out(field, value):
    event, told = read({"kind": "telemetry", "t": 1, "wall": 2, "battery": 50, field: value})
    assert isinstance(event, TelemetryEvent) and event.battery == 50
    assert getattr(event, field) is None and len(told) == 1


@pytest.mark.parametrize("value", [math.inf, math.nan, -1.0, 1e300])
def test_a_clock_out_of_range_reads_as_zero_and_is_told(value):
    event, told = read(TRIAL | {"t": value})
    assert event.t == 0.0 and len(told) == 1 and "read as 0" in told[0]


def test_null_in_a_field_that_cannot_be_null_is_damage():
    event, told = read({"kind": "marker", "t": 1, "wall": 2, "note": None})
    assert isinstance(event, UnknownEvent)  # MarkerEvent.note is required: kept, not lost
    assert told[0] == "marker: note=null is not a string: left out"
    event, told = read(TRIAL | {"warmup": None, "line": None})
    assert isinstance(event, TrialEvent) and event.warmup is False and event.line == ""
    assert len(told) == 2


def test_a_cooldown_with_an_infinite_cap_is_kept_as_unknown_not_used():
    record = {"kind": "cooldown", "t": 1, "wall": 2, "elapsed_s": 3, "min_s": 0,
              "cap_s": math.inf, "until": "fair"}  # fmt: skip
    event, told = read(record)
    assert not isinstance(event, CooldownEvent) and len(told) == 2


def test_arm_and_tag_are_literal_text_and_extra_is_text():
    record = TRIAL | {"arm": "\x1b]52;c;aGk=\x07", "tag": "\u202eevil", "extra": {"k": [1, 2]}}
    event, told = read(record)
    assert isinstance(event, TrialEvent) and told == []
    assert (event.arm, event.tag) == ("\\x1b]52;c;aGk=\\x07", "\\u202eevil")
    assert dict(event.extra) == {"k": "[1, 2]"}


def test_written_back_there_is_never_nan_or_infinity():
    event = TrialEvent(t=1.0, wall=2.0, arm="a", decode_tps=math.inf, prompt_tps=math.nan)
    record = to_record(event)
    assert "decode_tps" not in record and "prompt_tps" not in record
    json.dumps(record, allow_nan=False)
    unknown = UnknownEvent(
        t=1.0, wall=2.0, name="vibes", fields={"a": [math.nan, {"b": -math.inf}]}
    )
    assert json.dumps(to_record(unknown), allow_nan=False) == (
        '{"kind": "vibes", "a": [null, {"b": null}]}'
    )


def test_an_integer_of_thousands_of_digits_loses_only_its_field():
    line = json.dumps(TRIAL)[:-1] + ', "prompt_tps": ' + "9" * 5000 + "}"
    with pytest.raises(ValueError):
        json.loads(line)  # what a plain reader would do: lose the whole event
    event, told = read(decode(line))
    assert isinstance(event, TrialEvent) and event.decode_tps == 5.0 and event.prompt_tps is None
    assert len(told) == 1 and "outside" in told[0]


# --- versions (class 7) --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "found"),
    [
        ('"2"', '"2" (a string)'),
        ("2.5", "2.5 (a number)"),
        ("true", "true (a boolean)"),
        ("null", "null"),
        ("[1]", "[1] (a list)"),
    ],
)
def test_a_version_that_is_not_an_integer_is_refused_saying_what_it_is(tmp_path, version, found):
    header = json.dumps(make_header(source="x")).replace('"version": 2', f'"version": {version}')
    assert f'"version": {version}' in header
    path = tmp_path / "rec.jsonl"
    path.write_text(header + "\n" + json.dumps(TRIAL) + "\n")
    with pytest.raises(SourceError) as caught:
        open_source(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: recording version is {found}, expected an integer; ")
    assert "\n" not in message


@pytest.mark.parametrize("version", [0, -1, -(2**70)])
def test_a_version_below_1_is_refused_as_a_future_one_is(tmp_path, version):
    """Versions count from 1: a header with 0 or less was read silently, as if it were 2."""
    header = make_header(source="x") | {"version": version}
    path = tmp_path / "rec.jsonl"
    path.write_text(json.dumps(header) + "\n" + json.dumps(TRIAL) + "\n")
    with pytest.raises(SourceError) as caught:
        open_source(path)
    assert str(caught.value) == (
        f"{path}: recording version is {version}, expected 1 to 2; "
        "the header is damaged or the file was not written by anemon"
    )


def test_a_header_without_a_version_is_refused(tmp_path):
    header = make_header(source="x")
    del header["version"]
    path = Path(tmp_path / "rec.jsonl")
    path.write_text(json.dumps(header) + "\n")
    with pytest.raises(SourceError, match="recording version is missing"):
        open_source(path)


# --- property tests over the class ---------------------------------------------------------

_FIELDS = sorted({f.name for cls in EVENT_TYPES.values() for f in dataclasses.fields(cls)}
                 | {"x", "extra"})  # fmt: skip
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, -0.0, 1e308, -1e308, 2**63, 2**64 - 400]),
    st.text(max_size=20),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
_RECORDS = st.fixed_dictionaries(
    {"kind": st.sampled_from([*EVENT_TYPES, "vibes"]) | _SCALARS},
    optional={"t": _VALUES, "wall": _VALUES, "arm": _VALUES},
).flatmap(
    lambda base: st.dictionaries(st.sampled_from(_FIELDS), _VALUES, max_size=8).map(
        lambda rest: {**rest, **base}
    )
)


@settings(max_examples=400, deadline=None)
@given(record=_RECORDS)
def test_any_record_is_read_sanely_and_written_back_as_valid_json(record):
    event, told = read(record)
    if not isinstance(event, UnknownEvent):
        assert_sane(event)
    assert event.arm is None or printable(event.arm) == event.arm
    back = json.dumps(to_record(event), allow_nan=False)  # never NaN or Infinity
    Session().add(event)  # the store takes whatever the codec made
    assert isinstance(back, str) and all(isinstance(line, str) for line in told)


@settings(max_examples=200, deadline=None)
@given(digits=st.integers(min_value=1, max_value=6000), field=st.sampled_from(["gen", "t", "x"]))
def test_a_number_of_any_size_in_recorded_text_is_read(digits, field):
    line = json.dumps({k: v for k, v in TRIAL.items() if k != field})[:-1]
    line += f', "{field}": ' + "7" * digits + "}"
    event, _ = read(decode(line))
    assert isinstance(event, TrialEvent)
    assert_sane(event)
    json.dumps(to_record(event), allow_nan=False)


def test_the_marker_note_is_kept_as_data():
    event, told = read({"kind": "marker", "t": 1, "wall": 2, "note": "\x1b[2J"})
    assert isinstance(event, MarkerEvent) and event.note == "\x1b[2J" and told == []


PREFLIGHT = {"kind": "preflight", "t": 1, "wall": 2, "status": "fail"}


def test_a_preflights_checks_are_typed_and_its_odd_ones_read_as_the_views_showed_them():
    checks = [{"check": "free disk", "status": "fail", "reading": "3 GB\x1b[2J", "note": "",
               "later": "kept out"},
              {"check": 5, "status": "skip", "reading": None},  # a later verdict: kept
              {}]  # fmt: skip
    event, told = read({**PREFLIGHT, "checks": checks})
    assert isinstance(event, PreflightEvent) and not told
    assert event.checks == (Check("free disk", "fail", "3 GB\\x1b[2J"),
                            Check("5", "skip", "None"), Check("?", "?", ""))  # fmt: skip
    words = describe(event)
    assert words is not None and words.text == "pre-flight fail: free disk, 5, ?"


@pytest.mark.parametrize("checks", [["disk"], [{"check": "disk"}, 3], "disk", {"check": "disk"}])
def test_checks_that_are_not_a_list_of_objects_are_left_out_and_told(checks):
    event, told = read({**PREFLIGHT, "checks": checks})
    assert isinstance(event, PreflightEvent) and event.checks == ()
    assert len(told) == 1 and told[0].startswith("preflight: checks=")


def test_a_preflight_is_written_as_before():
    """The recorded bytes of a pre-flight: each check an object of its four fields in order."""
    event = PreflightEvent(t=1.0, wall=2.0, source="preflight", status="warn", checks=(
        Check("thermal", "warn", "serious", "the first arm would start warm"),
        Check("os build", "pass", "24A437")))  # fmt: skip
    line = json.dumps(to_record(event), ensure_ascii=False, separators=(",", ":"))
    assert line == (
        '{"kind":"preflight","t":1.0,"wall":2.0,"arm":null,"status":"warn","checks":['
        '{"check":"thermal","status":"warn","reading":"serious","note":"the first arm would '
        'start warm"},{"check":"os build","status":"pass","reading":"24A437","note":""}],'
        '"forced":false}'
    )
    assert read(json.loads(line))[0] == dataclasses.replace(event, source="x")
