"""The telemetry table made from the readings' columns (`export._telemetry`), not an event and a
dict per reading: the same frame as that way gave (its reference kept here), exported."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd

from anemon.analysis.export import _telemetry, _tidy, export_table
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


def sessions() -> list[Session]:
    made = [Session.from_events(generated(seed)) for seed in range(3)]
    made.append(Session(telemetry=held(varied())))  # readings kept as they came among them
    made.append(Session.from_events([TelemetryEvent(t=1.0, wall=1.0)]))  # every field None
    made += [next(load_sessions([path])).session for path in sorted(RECORDINGS.glob("*.jsonl"))]
    return made


def test_the_telemetry_table_is_the_one_made_a_reading_at_a_time() -> None:
    for session in sessions():
        made = _telemetry(session)
        assert made is not None
        pd.testing.assert_frame_equal(_tidy(made), _tidy(by_rows(session)))


def test_the_table_is_in_time_order_as_a_stable_sort_puts_it() -> None:
    for session in sessions():
        old = by_rows(session).sort_values("t", kind="stable").reset_index(drop=True)
        pd.testing.assert_frame_equal(export_table(session, "telemetry"), _tidy(old))


def test_the_exports_keep_their_columns_and_order() -> None:
    session = Session(telemetry=held(varied()))
    table = export_table(session, "telemetry")
    assert list(table.columns)[:3] == ["arm", "t", "battery"] and table.columns[-1] == "source"
    assert len(table) == len(varied())
