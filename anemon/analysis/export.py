"""Every trial (and host telemetry) of a session as one table, for CSV, JSON, Parquet, Markdown."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import numpy as np
import pandas as pd

from anemon.analysis.summary import trials_frame
from anemon.errors import AnemonError
from anemon.events import THERMAL_NAMES, TelemetryEvent
from anemon.store import Session
from anemon.text import printable

FORMATS = ("csv", "parquet", "json", "md")
_INT_COLUMNS = ("trial", "round", "gen")
_BOOL_COLUMNS = ("warmup", "charging", "plugged")
_FLOAT_COLUMNS = ("battery", "temperature_c", "free_gb", "total_gb", "power_w")
_MAX_EXACT = 2**53
"""The largest whole number a float64 column holds exactly: counts beyond it are not counts
(the parser's ranges keep them far below), and they could overflow an int64 cast."""
_FORMULA = ("=", "+", "-", "@", "\t", "\r")
"""A CSV cell starting with one of these is run as a formula by a spreadsheet."""


def export_frame(session: Session) -> pd.DataFrame:
    """One row per trial (`kind` = trial, warm-ups flagged) and per telemetry reading."""
    frames = []
    for arm in session.arms.values():
        frame = trials_frame(arm)
        frame.insert(0, "arm", arm.name)
        frame.insert(0, "kind", "trial")
        frames.append(frame)
    if session.telemetry:
        rows = [_telemetry_row(e) for e in session.telemetry]
        frames.append(pd.DataFrame(rows))
    if not frames:
        return pd.DataFrame(columns=["kind", "arm", "t"])
    table = pd.concat(frames, ignore_index=True).sort_values("t", kind="stable")
    return _tidy(table.reset_index(drop=True))


def _telemetry_row(event: TelemetryEvent) -> dict[str, object]:
    row: dict[str, object] = {"kind": "telemetry", "arm": event.arm, "t": event.t}
    for f in dataclasses.fields(event):
        if f.name not in ("t", "wall", "arm", "source"):
            row[f.name] = getattr(event, f.name)
    return row


def _tidy(table: pd.DataFrame) -> pd.DataFrame:
    """Readable types: thermal as names, flags as nullable booleans (warm-up, charging,
    plugged), counts as nullable integers, readings as floats (a recorded value that is not a
    number, which only a damaged recording has, is NaN)."""
    if "thermal" in table:
        names = pd.Series(THERMAL_NAMES)
        table["thermal"] = table["thermal"].map(lambda x: names.get(x) if x == x else None)
    for column in _BOOL_COLUMNS:
        if column in table:
            table[column] = table[column].map(_flag).astype("boolean")
    for column in _INT_COLUMNS:
        if column in table:
            table[column] = _whole_numbers(table[column])
    for column in _FLOAT_COLUMNS:
        if column in table:
            table[column] = pd.to_numeric(table[column], errors="coerce").astype("float64")
    return table


def _whole_numbers(column: pd.Series) -> pd.Series:
    """A nullable Int64 column: a value that is not a finite whole number of safe size is
    missing, so the cast can never overflow or refuse."""
    values = pd.to_numeric(column, errors="coerce").astype("float64")
    with np.errstate(invalid="ignore"):
        whole = np.isfinite(values) & (values.abs() <= _MAX_EXACT) & (values == np.round(values))
    return values.where(whole).astype("Int64")


def _flag(value: object) -> bool | None:
    """True/False for a flag (a trial's warm-up is 0.0 or 1.0); None for a missing one."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value == value:
        return bool(value)
    return None


def write_table(table: pd.DataFrame, fmt: str, out: Path | None) -> str | None:
    """Write to `out`, or return the text for stdout (Parquet needs `out`)."""
    if fmt == "parquet":
        _write_parquet(table, out)
        return None
    if fmt == "csv":
        text = csv_safe(table).to_csv(index=False)
    elif fmt == "json":
        text = table.to_json(orient="records", indent=1) + "\n"
    else:
        text = _markdown(table)
    if out is None:
        return text
    out.write_text(text, encoding="utf-8")
    return None


def _write_parquet(table: pd.DataFrame, out: Path | None) -> None:
    if out is None:
        raise AnemonError("--format parquet writes a binary file: give it one with -o OUT")
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise AnemonError(
            "Parquet needs pyarrow: pip install 'anemon[parquet]' (or use --format csv)"
        ) from None
    table.to_parquet(out, index=False)


def csv_safe(table: pd.DataFrame) -> pd.DataFrame:
    """The table with its text cells made inert: control characters escaped (CSV goes to a
    terminal when there is no -o), and a cell a spreadsheet would run as a formula prefixed
    with a quote. Numbers stay numbers: -3.5 in a numeric column is not a formula."""
    text_columns = [c for c in table.columns if _is_text(table[c])]
    if not text_columns:
        return table
    safe = table.copy()
    for column in text_columns:
        safe[column] = safe[column].map(_csv_cell)
    return safe


def _is_text(column: pd.Series) -> bool:
    """Text or mixed cells (pandas 3 gives text its own `str` dtype, older ones `object`)."""
    return column.dtype == object or pd.api.types.is_string_dtype(column.dtype)


def _csv_cell(value: object) -> object:
    if not isinstance(value, str):
        return value
    return "'" + printable(value) if value.startswith(_FORMULA) else printable(value)


def _markdown(table: pd.DataFrame) -> str:
    """A Markdown table; each cell literal text: control characters escaped, `|` too."""
    buffer = io.StringIO()
    columns = [_md_cell(c) for c in table.columns]
    buffer.write("| " + " | ".join(columns) + " |\n|" + "---|" * len(columns) + "\n")
    for row in table.itertuples(index=False):
        cells = ("" if pd.isna(v) else _md_cell(v) for v in row)
        buffer.write("| " + " | ".join(cells) + " |\n")
    return buffer.getvalue()


def _md_cell(value: object) -> str:
    return printable(str(value)).replace("|", "\\|")
