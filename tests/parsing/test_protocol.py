"""Each rule of docs/spec/line-protocol.md, one test or parametrised case each."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from anemon.events import (
    EndEvent,
    ErrorEvent,
    IdleEvent,
    LoadEvent,
    StartEvent,
    TextEvent,
    TrialEvent,
)
from anemon.parsing import LineParser


def parse(line: str, parser: LineParser | None = None):
    return (parser or LineParser("test")).parse(line, t=1.0, wall=100.0)


@pytest.mark.parametrize(
    ("line", "cls"),
    [
        ("START arm=a model=M compute=ANE bits=8 os=24A437 free_gb=38.2 mode=sustain", StartEvent),
        ("LOAD arm=a load_s=0.31 cold=1 footprint_gb=1.6", LoadEvent),
        ("TRIAL arm=a trial=1 warmup=0 t=9.6 decode_tps=75.8", TrialEvent),
        ("IDLE thermal=fair battery=95 battery_state=charging free_gb=30", IdleEvent),
        ("END arm=a reason=done trials=133", EndEvent),
    ],
)
def test_each_kind_becomes_its_record(line, cls):
    assert type(parse(line)) is cls


def test_start_fields_are_typed():
    e = parse(
        "START arm=a model=M compute=ANE bits=8 os=24A437 free_gb=38.2 mode=sustain p=128 n=5"
    )
    assert (e.model, e.compute, e.bits, e.os, e.free_gb, e.mode, e.p, e.n) == (
        "M", "ane", "8", "24A437", 38.2, "sustain", 128, 5,
    )  # fmt: skip


def test_trial_fields_are_typed():
    e = parse(
        "TRIAL arm=a trial=3 warmup=0 t=9.6 prompt_tokens=128 prompt_tps=3902.4 decode_tps=75.8 "
        "gen=256 battery=95 battery_state=charging thermal=fair free_gb=38.1"
    )
    assert e.arm == "a" and e.trial == 3 and e.warmup is False and e.app_t == 9.6
    assert (e.prompt_tokens, e.prompt_tps, e.decode_tps, e.gen) == (128, 3902.4, 75.8, 256)
    assert (e.battery, e.battery_state, e.thermal, e.free_gb) == (95.0, "charging", 1, 38.1)


@pytest.mark.parametrize(
    ("line", "cls"), [("trial arm=a decode_tps=1", TrialEvent), ("Start arm=a", StartEvent)]
)
def test_kind_is_case_insensitive(line, cls):
    assert type(parse(line)) is cls


@pytest.mark.parametrize(
    ("prefix", "epoch"),
    [
        ("2026-09-15T10:02:11.123Z ", datetime(2026, 9, 15, 10, 2, 11, 123000, UTC).timestamp()),
        ("2026-09-15T12:02:11+02:00 ", datetime(2026, 9, 15, 10, 2, 11, tzinfo=UTC).timestamp()),
        ("", 100.0),
    ],
)
@pytest.mark.parametrize("tag", ["[bench] ", ""])
def test_timestamp_and_tag_prefixes(prefix, epoch, tag):
    e = parse(f"{prefix}{tag}TRIAL arm=a decode_tps=5")
    assert isinstance(e, TrialEvent)
    assert e.decode_tps == 5.0
    assert e.wall == pytest.approx(epoch)


def test_quoted_values_with_escapes():
    e = parse(r'START arm=a model="MiniCPM 5 \"1B\" \\ x" os=1')
    assert e.model == 'MiniCPM 5 "1B" \\ x'
    assert e.os == "1"


def test_unknown_keys_are_kept():
    e = parse('TRIAL arm=a decode_tps=5 kv_cache=fp16 note="a b"')
    assert dict(e.extra) == {"kv_cache": "fp16", "note": "a b"}
    assert e.warnings == 0


def test_unparsable_known_value_is_missing_and_warned():
    parser = LineParser("x")
    e = parse("TRIAL arm=a decode_tps=fast prompt_tps=100 thermal=hot gen=256", parser)
    assert e.decode_tps is None and e.thermal is None
    assert e.prompt_tps == 100.0 and e.gen == 256
    assert e.warnings == 2 and parser.warnings == 2


def test_keys_in_any_order_and_last_repeat_wins():
    e = parse("TRIAL decode_tps=1 arm=a decode_tps=2 trial=7")
    assert (e.arm, e.decode_tps, e.trial) == ("a", 2.0, 7)


@pytest.mark.parametrize(
    ("value", "thermal"),
    [("nominal", 0), ("fair", 1), ("serious", 2), ("critical", 3), ("0", 0), ("3", 3)],
)
def test_thermal_names_or_numbers(value, thermal):
    assert parse(f"TRIAL arm=a thermal={value}").thermal == thermal


@pytest.mark.parametrize(
    ("value", "percent", "warnings"),
    [("95", 95.0, 0), ("0.5", 50.0, 0), ("1.0", 100.0, 0), ("1", 1.0, 0), ("-1", None, 0),
     ("0.0", 0.0, 0), ("150", None, 1), ("x", None, 1)],
)  # fmt: skip
def test_battery_percent_fraction_and_unknown(value, percent, warnings):
    e = parse(f"TRIAL arm=a battery={value}")
    assert e.battery == percent
    assert e.warnings == warnings


@pytest.mark.parametrize("state", ["unknown", "unplugged", "charging", "full"])
def test_battery_states(state):
    assert parse(f"IDLE battery_state={state}").battery_state == state


def test_an_error_after_a_prefix_keeps_its_arm():
    e = parse("2026-09-15T10:12:40Z [bench] arm=b ERROR: Metal GPU Timeout ")
    assert isinstance(e, ErrorEvent)
    assert (e.arm, e.message) == ("b", "Metal GPU Timeout")


def test_an_error_anywhere_in_a_line_is_the_rest_of_it():
    e = parse('something failed: ERROR: invalidState("x") ERROR: again')
    assert isinstance(e, ErrorEvent)
    assert e.message == 'invalidState("x") ERROR: again'


def test_error_wins_over_a_record_kind():
    assert isinstance(parse("TRIAL arm=a ERROR: boom"), ErrorEvent)


@pytest.mark.parametrize(
    "line", ["ERROR: load failed", "LOAD load_s=1", "TRIAL decode_tps=1", "free text"]
)
def test_a_line_without_arm_belongs_to_the_launch_in_progress(line):
    parser = LineParser("x")
    parse("START arm=first", parser)
    parse("START arm=second", parser)
    assert parse(line, parser).arm == "second"


def test_a_line_with_its_own_arm_keeps_it():
    parser = LineParser("x")
    parse("START arm=first", parser)
    assert parse("TRIAL arm=other decode_tps=1", parser).arm == "other"


def test_a_reset_forgets_the_launch_in_progress():
    parser = LineParser("x")
    parse("START arm=first", parser)
    parser.reset()
    assert parse("ERROR: x", parser).arm is None


@pytest.mark.parametrize(
    "line", ["free_gb=38.2", "hello world", "", "   ", "[bench]", "TRIALS arm=a"]
)
def test_other_lines_are_text_records(line):
    e = parse(line)
    assert isinstance(e, TextEvent)
    assert e.line == line


def test_crlf_accepted():
    e = parse("TRIAL arm=a decode_tps=5\r\n")
    assert e.decode_tps == 5.0 and e.line == "TRIAL arm=a decode_tps=5"


def test_invalid_utf8_is_replaced_not_raised(tmp_path):
    from anemon.recording.reader import open_source

    path = tmp_path / "bad.log"
    path.write_bytes(b"TRIAL arm=\xff\xfe decode_tps=5\n\xc3(\n")
    events = list(open_source(path))
    assert events[0].arm == "\ufffd\ufffd" and events[0].decode_tps == 5.0
    assert isinstance(events[1], TextEvent)


def test_markup_and_escapes_are_plain_data():
    line = "[bold red]x[/] \x1b[31mred\x1b[0m [link=http://x]y[/link]"
    e = parse(line)
    assert isinstance(e, TextEvent) and e.line == line


PLAIN_TEXT_CASES = (
    "",
    " ",
    "loading weights",
    "  TRIAL arm=x",
    "trial arm=x",
    "\u017ftart arm=x",
    "[t] x",
    "2026-01-01T00:00:00Z x",
    "12 apples",
    "\ufeffx",
    "x ERROR: y",
    "END",
    "idle",
    "a=b c",
    "\x00 control",
    "é",
    "x\r",
    "9",
    "[",
    "Start",
)


@pytest.mark.parametrize("line", PLAIN_TEXT_CASES)
def test_plain_text_is_what_the_parser_makes_a_text_event_of_and_nothing_else(line: str):
    """`plain_text` holds only for a line the parser makes a TextEvent of that sets no time,
    no arm and no warning: a run of such lines may be counted instead of parsed."""
    from anemon.events import TextEvent
    from anemon.parsing.protocol import plain_text

    placed: list[object] = []
    parser = LineParser("log", timeline=lambda t, stamp, cls, app_t: placed.append(stamp) or t)
    parser.current_arm = "kept"
    event = parser.parse(line, t=5.0, wall=7.0)
    untouched = (
        type(event) is TextEvent and event.t == 5.0 and event.wall == 7.0
        and event.arm == "kept" and parser.current_arm == "kept" and parser.warnings == 0
        and placed == [None]
    )  # fmt: skip
    if plain_text(line):
        assert untouched, line
    if line in ("", " ", "loading weights", "  TRIAL arm=x", "a=b c", "é", "x\r"):
        assert plain_text(line), line  # the text lines a log is full of are counted
