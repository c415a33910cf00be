"""The telemetry table made from the readings' columns (`export._telemetry`), not an event and a
dict per reading: the same frame as that way gave (its reference kept here), exported."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from anemon.analysis import export
from anemon.analysis.export import (
    TABLES,
    _telemetry,
    _tidy,
    _trials,
    export_table,
    table_parts,
    write_table,
)
from anemon.analysis.load import load_sessions
from anemon.events import TelemetryEvent
from anemon.store import Session
from anemon.store.readings import Readings
from tests.analysis.test_growing_readings import generated
from tests.store.test_readings import varied

RECORDINGS = Path(__file__).resolve().parents[2] / "recordings"


def by_rows(session: Session) -> pd.DataFrame:
    """The table as it was made: a dict per reading, made again as its event."""
    rows = []
    for event in session.telemetry:
        row: dict[str, object] = {"arm": event.arm, "t": event.t}
        for f in dataclasses.fields(event):
            if f.name not in ("t", "wall", "arm", "source"):
                row[f.name] = getattr(event, f.name)
        row["source"] = event.source
        rows.append(row)
    return pd.DataFrame(rows)


def held(events: list[TelemetryEvent]) -> Readings:
    readings = Readings()
    for event in events:
        readings.append(event)
    return readings


def sessions(recordings: bool = True) -> list[Session]:
    made = [Session.from_events(generated(seed)) for seed in range(3)]
    made.append(Session(telemetry=held(varied())))  # readings kept as they came among them
    made.append(Session.from_events([TelemetryEvent(t=1.0, wall=1.0)]))  # every field None
    if recordings:
        made += [next(load_sessions([p])).session for p in sorted(RECORDINGS.glob("*.jsonl"))]
    return made


def test_the_telemetry_table_is_the_one_made_a_reading_at_a_time() -> None:
    for session in sessions():
        made = _telemetry(session.telemetry.columns())
        pd.testing.assert_frame_equal(_tidy(made), _tidy(by_rows(session)))


def test_the_table_is_in_time_order_as_a_stable_sort_puts_it() -> None:
    for session in sessions():
        old = by_rows(session).sort_values("t", kind="stable").reset_index(drop=True)
        pd.testing.assert_frame_equal(export_table(session, "telemetry"), _tidy(old))


def test_the_trials_table_is_the_arms_frames_in_time_order() -> None:
    """Its columns' types too: a battery state of objects stays one (Parquet keeps the type)."""
    for session in sessions():
        frame = _trials(session)
        if frame is None:
            continue
        old = frame.sort_values("t", kind="stable").reset_index(drop=True)
        pd.testing.assert_frame_equal(export_table(session, "trials"), _tidy(old))


def test_the_exports_keep_their_columns_and_order() -> None:
    session = Session(telemetry=held(varied()))
    table = export_table(session, "telemetry")
    assert list(table.columns)[:3] == ["arm", "t", "battery"] and table.columns[-1] == "source"
    assert len(table) == len(varied())


@pytest.mark.parametrize("rows, recordings", [(3, False), (251, True)])
def test_a_table_in_parts_is_the_whole_table_and_writes_the_same_text(
    rows: int, recordings: bool
) -> None:
    """Parts of `rows` rows (the CLI's are 65,536) are the whole table cut in order, the time
    order included where the rows were not in it, and each format's text is the same bytes
    (parts of two rows: only the small sessions, else a minute of to_csv calls)."""
    unordered = 0
    for session in sessions(recordings):
        for table in TABLES:
            whole = export_table(session, table)  # one part: the tests' tables are small
            parts = list(table_parts(session, table, rows))
            assert all(len(part) <= rows for part in parts)
            pd.testing.assert_frame_equal(export.whole(parts), whole)
            for fmt in ("csv", "json", "md"):
                assert write_table(parts, fmt, None, "T") == write_table(whole, fmt, None, "T")
            unordered += not whole["t"].equals(pd.concat([p["t"] for p in parts]))
        times = [event.t for event in session.telemetry]
        unordered += times != sorted(times)
    assert unordered, "a session whose readings are not in time order"


@pytest.mark.parametrize("fmt", ["csv", "json", "md"])
def test_a_table_is_written_as_its_parts_come(fmt: str) -> None:
    """A part is made only when the text before it is written: never all held at once."""
    session = Session.from_events(generated(0))
    made = 0

    def parts() -> Iterator[pd.DataFrame]:
        nonlocal made
        for part in table_parts(session, "telemetry", rows=5):
            made += 1
            yield part

    for written, _ in enumerate(export._texts(parts(), fmt, "T"), start=1):
        assert made <= written + 1
    assert made > 3
