"""Hostile log lines (issue 15, classes 1 and 2): any number, any text, one event, no exception.

A value outside its field's range (anemon/parsing/ranges.py) is missing with a counted warning,
like one that did not parse; arm names and tags come out as literal text.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anemon.events import EVENT_TYPES, Event, RecordEvent, StartEvent, TextEvent, TrialEvent
from anemon.parsing import LineParser
from anemon.parsing.ranges import RANGES, in_range
from anemon.store import Session
from anemon.text import printable


def parse(line: str, parser: LineParser | None = None) -> Event:
    return (parser or LineParser("test")).parse(line, t=1.0, wall=100.0)


@pytest.mark.parametrize(
    ("value", "field"),
    [
        ("9" * 5000, "decode_tps"),  # float() of it is inf
        ("9" * 5000, "gen"),  # int() refuses it (Python's 4300-digit limit)
        ("99999999999999999999999", "gen"),  # beyond int64
        ("inf", "decode_tps"),
        ("-inf", "prompt_tps"),
        ("1e308", "prompt_tps"),
        ("-5", "decode_tps"),  # rates are never negative
        ("-1", "gen"),  # nor counts
        ("1000000001", "prompt_tokens"),
        ("1e400", "free_gb"),
        ("-3", "trial"),
    ],
)
def test_an_out_of_range_number_is_missing_with_a_warning(value, field):
    parser = LineParser("test")
    event = parse(f"TRIAL arm=a decode_tps=5 gen=7 {field}={value}", parser)
    assert isinstance(event, TrialEvent)
    assert getattr(event, field) is None and event.warnings == 1 and parser.warnings == 1
    assert parser.last_rejected.startswith(f"{field}='")
    assert "outside" in parser.last_rejected or "did not parse" in parser.last_rejected
    assert event.arm == "a"  # the rest of the line stands
    assert (event.decode_tps if field != "decode_tps" else event.gen) in (5.0, 7)


def test_the_warning_says_the_range():
    parser = LineParser("test")
    parse("TRIAL arm=a decode_tps=inf gen=-1 thermal=hot", parser)
    assert parser.last_rejected == (
        "decode_tps='inf': outside 0 to 1e9 tok/s; gen='-1': outside 0 to 1e9; "
        "thermal='hot': did not parse"
    )


@pytest.mark.parametrize(
    "line",
    [
        "TRIAL arm=a decode_tps=0 gen=0 prompt_tps=1e9 trial=1000000000",
        "START arm=a free_gb=0 p=1 g=1000000000 n=3",
        "LOAD arm=a load_s=0.0 footprint_gb=1e6",
        "IDLE thermal=3 battery=100 free_gb=0.5",
        "TRIAL arm=a decode_tps=-0.0",
    ],
)
def test_the_ends_of_each_range_are_kept(line):
    event = parse(line)
    assert isinstance(event, RecordEvent) and event.warnings == 0


def test_infinite_decode_goes_through_the_session_without_exception():
    parser = LineParser("test")
    session = Session()
    for line in ("START arm=a", "TRIAL arm=a decode_tps=inf", "TRIAL arm=a decode_tps=nan"):
        session.add(parse(line, parser))
    arm = session.arms["a"]
    assert len(arm) == 2 and session.warnings == 2
    assert all(v != v for v in arm.columns["decode_tps"])  # both missing (NaN), not inf


def test_a_timestamp_outside_the_wall_range_is_ignored():
    event = parse("0001-01-01T00:00:00Z TRIAL arm=a decode_tps=5")
    assert isinstance(event, TrialEvent) and event.wall == 100.0 and event.decode_tps == 5.0


@pytest.mark.parametrize(
    ("line", "arm", "tag"),
    [
        (
            "TRIAL arm=\x1b]52;c;aGk=\x07 tag=\x1b[2J decode_tps=5",
            "\\x1b]52;c;aGk=\\x07",
            "\\x1b[2J",
        ),
        ('START arm="a\tb" tag="\u202eevil"', "a\\x09b", "\\u202eevil"),
        ("arm=\x1b[31mx tag=\x9b ERROR: boom", "\\x1b[31mx", "\\x9b"),
    ],
)
def test_arm_names_and_tags_are_literal_text(line, arm, tag):
    event = parse(line)
    assert isinstance(event, RecordEvent)
    assert (event.arm, event.tag) == (arm, tag)


def test_free_text_is_kept_as_it_came():
    # The raw line is data: escaped where it is shown (headless, the log panel), not here.
    line = "boot \x1b]52;c;aGk=\x07 done"
    event = parse(line)
    assert isinstance(event, TextEvent) and event.line == line


def test_a_byte_order_mark_does_not_hide_the_first_record():
    event = parse("\ufeffSTART arm=a compute=ane")
    assert isinstance(event, StartEvent) and event.compute == "ane"


# --- property tests over the class ---------------------------------------------------------

_PROTOCOL_KEYS = {"arm", "tag", "t", "warmup", "cold", "compute", "mode", "battery_state", "model"}
_KEYS = sorted({*RANGES, *_PROTOCOL_KEYS, "x"} - {"app_t", "wall", "elapsed_s", "min_s", "cap_s"})
_NUMBERS = st.one_of(
    st.integers(min_value=-(10**40), max_value=10**40).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["inf", "-inf", "nan", "NaN", "-0.0", "1e308", "1e-308", "0x10", "1_000"]),
    st.integers(min_value=4200, max_value=6000).map(lambda n: "9" * n),
)
_TEXT = st.text(max_size=30)
_VALUES = st.one_of(_NUMBERS, _TEXT, _TEXT.map(lambda s: '"' + s.replace('"', '\\"') + '"'))
_PAIRS = st.lists(st.tuples(st.sampled_from(_KEYS), _VALUES), max_size=8)
_HEADS = st.sampled_from(["START", "LOAD", "TRIAL", "IDLE", "END", "trial", "ERROR:", "hello"])


def _line(head: str, pairs: list[tuple[str, str]]) -> str:
    return " ".join([head, *(f"{key}={value}" for key, value in pairs)])


def assert_sane(event: Event) -> None:
    """Every number of the event in its field's range; every arm and tag literal text."""
    for f in dataclasses.fields(event):
        value = getattr(event, f.name)
        if isinstance(value, int | float) and not isinstance(value, bool):
            assert in_range(f.name, value), (f.name, value)
    if event.arm is not None:
        assert printable(event.arm) == event.arm
    tag = getattr(event, "tag", None)
    if tag is not None:
        assert printable(tag) == tag


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(st.tuples(_HEADS, _PAIRS), min_size=1, max_size=5))
def test_any_line_is_one_event_with_sane_fields(lines):
    parser = LineParser("fuzz")
    session = Session()
    warnings = 0
    for head, pairs in lines:
        event = parse(_line(head, pairs), parser)
        assert isinstance(event, RecordEvent)
        assert_sane(event)
        warnings += event.warnings
        session.add(event)
    assert parser.warnings == warnings == session.warnings


@settings(max_examples=300, deadline=None)
@given(line=st.text(max_size=200))
def test_any_text_is_one_event(line):
    event = parse(line)
    assert isinstance(event, RecordEvent)
    assert_sane(event)


def test_every_numeric_field_of_every_event_has_its_range():
    # The parser and the codec judge by one table: no number may slip through unbounded.
    numeric = {
        f.name
        for cls in EVENT_TYPES.values()
        for f in dataclasses.fields(cls)
        if str(f.type).removesuffix(" | None") in ("int", "float")
    }
    assert numeric <= set(RANGES)
