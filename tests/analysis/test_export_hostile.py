"""Export of hostile sessions (issue 15, classes 1 and 2): casts never overflow, JSON is always
valid JSON, CSV cells never run as formulas, Markdown cells are literal text."""

from __future__ import annotations

import csv
import io
import json
import math

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from anemon.analysis.export import export_table, write_table
from anemon.events import StartEvent, TelemetryEvent, TrialEvent
from anemon.parsing import LineParser
from anemon.store import Session


def session_of(*events) -> Session:
    return Session.from_events(events)


def trial(**fields) -> TrialEvent:
    return TrialEvent(t=fields.pop("t", 1.0), wall=2.0, arm=fields.pop("arm", "a"), **fields)


def strict_json(text: str) -> list[dict]:
    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} in JSON output")

    return json.loads(text, parse_constant=refuse)


def test_counts_beyond_int64_or_not_whole_do_not_break_the_cast():
    # Events made in code (not through the parser) can hold anything: the export still works.
    session = session_of(
        trial(gen=10**23, trial=2**63),
        trial(gen=3, trial=-1),
        trial(t=2.0, gen=None),
    )
    table = export_table(session)
    assert str(table["gen"].dtype) == "Int64"
    assert table["gen"].isna().tolist() == [True, False, True]
    for fmt in ("csv", "json", "md"):
        assert write_table(table, fmt, None)


def test_json_never_holds_nan_or_infinity():
    session = session_of(
        trial(decode_tps=math.inf, prompt_tps=math.nan, battery=-math.inf),
        TelemetryEvent(t=3.0, wall=4.0, power_w=math.inf, temperature_c=math.nan),
    )
    (trial_row,) = strict_json(write_table(export_table(session), "json", None) or "")
    (reading,) = strict_json(write_table(export_table(session, "telemetry"), "json", None) or "")
    assert trial_row["decode_tps"] is None and reading["power_w"] is None


def test_a_formula_in_a_text_cell_is_neutralised_numbers_are_not():
    session = session_of(
        trial(arm="=cmd()", decode_tps=-0.0),
        trial(arm="+1", t=2.0),
        trial(arm="@SUM(A1)", t=3.0),
        trial(arm="-2", t=4.0),
        trial(arm="\tx", t=5.0),
        TelemetryEvent(t=6.0, wall=7.0, power_w=-3.5, battery_state="=HYPERLINK(1)"),
    )
    text = write_table(export_table(session), "csv", None) or ""
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["arm"] for r in rows] == ["'=cmd()", "'+1", "'@SUM(A1)", "'-2", "'\\x09x"]
    assert rows[0]["decode_tps"] == "-0.0"
    text = write_table(export_table(session, "telemetry"), "csv", None) or ""
    (reading,) = csv.DictReader(io.StringIO(text))
    assert reading["battery_state"] == "'=HYPERLINK(1)"
    assert reading["power_w"] == "-3.5"  # a negative number is a number


def test_csv_and_markdown_cells_are_literal_text():
    session = session_of(  # a trial's battery_state is a protocol word; a device's is any text
        trial(arm="\x1b]52;c;aGk=\x07|x"),
        TelemetryEvent(t=2.0, wall=3.0, battery_state="a|b\nc"),
    )
    tables = (export_table(session), export_table(session, "telemetry"))
    csv_text = "".join(write_table(table, "csv", None) or "" for table in tables)
    md = [write_table(table, "md", None) or "" for table in tables]
    for text in (csv_text, *md):
        assert "\x1b" not in text and "\x07" not in text
    assert "\\x1b]52" in csv_text and "\\x1b]52;c;aGk=\\x07\\|x" in md[0] and "a\\|b\\x0ac" in md[1]
    # header, rule, a row: no cell broke a line
    assert [len(text.splitlines()) for text in md] == [3, 3]


def test_a_hostile_log_exports_in_every_format():
    lines = [
        "START arm=a compute=ane",
        "TRIAL arm=a decode_tps=" + "9" * 5000 + " gen=99999999999999999999999",
        "TRIAL arm=a decode_tps=inf gen=-1 prompt_tps=nan",
        "TRIAL arm==cmd() decode_tps=5 gen=3",
    ]
    parser = LineParser("x")
    session = Session.from_events(parser.parse(line, t=i, wall=i) for i, line in enumerate(lines))
    table = export_table(session)
    assert parser.warnings == 5
    rows = strict_json(write_table(table, "json", None) or "")
    assert [r["gen"] for r in rows] == [None, None, 3]
    assert "'=cmd()" in (write_table(table, "csv", None) or "")


_FLOATS = st.floats(allow_nan=True, allow_infinity=True) | st.none()
_INTS = st.integers(min_value=-(10**30), max_value=10**30) | st.none()


@settings(max_examples=150, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.text(max_size=10), _FLOATS, _FLOATS, _INTS, _INTS, st.text(max_size=8)),
        min_size=1,
        max_size=6,
    ),
    power=_FLOATS,
)
def test_any_values_export_in_every_format(rows, power):
    events: list = [StartEvent(t=0.0, wall=0.0, arm="a")]
    for i, (arm, decode, battery, gen, index, state) in enumerate(rows):
        events.append(trial(t=float(i), arm=arm or None, decode_tps=decode, battery=battery,
                            gen=gen, trial=index, battery_state=state))  # fmt: skip
    events.append(TelemetryEvent(t=9.0, wall=9.0, power_w=power))
    session = session_of(*events)
    for table in (export_table(session), export_table(session, "telemetry")):
        strict_json(write_table(table, "json", None) or "")
        for fmt in ("csv", "md"):
            text = write_table(table, fmt, None) or ""
            assert "\x1b" not in text
        for cell in pd.read_csv(io.StringIO(write_table(table, "csv", None) or ""), dtype=str)[
            "arm"
        ].dropna():
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r"))
