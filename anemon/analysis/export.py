"""Every trial (and host telemetry) of a session as one table, for CSV, JSON, Parquet, Markdown."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import re
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from anemon import __version__
from anemon.analysis.load import Loaded
from anemon.analysis.summary import ArmSummary, summarize
from anemon.errors import AnemonError
from anemon.events import THERMAL_NAMES, TelemetryEvent
from anemon.paths import replacing
from anemon.store import ArmSeries, Session
from anemon.store.readings import Columns
from anemon.text import printable

FORMATS = ("csv", "parquet", "json", "md", "sqlite")
_INT_COLUMNS = ("trial", "round", "gen", "pid")
_BOOL_COLUMNS = ("warmup", "charging", "plugged")
_FLOAT_COLUMNS = ("battery", "temperature_c", "free_gb", "total_gb", "power_w", "load_w",
                  "power_in_w", "battery_power_w", "load_changed_t", "cpu_pct", "mem_gb",
                  "gpu_pct")  # fmt: skip
PARQUET_INSTALL = "pip install -e '.[parquet]'"
"""The install command the README gives for Parquet (tests/analysis/test_export_lab_note.py)."""
_MAX_EXACT = 2**53
"""The largest whole number a float64 column holds exactly: counts beyond it are not counts
(the parser's ranges keep them far below), and they could overflow an int64 cast."""
_FORMULA = ("=", "+", "-", "@", "\t", "\r")
"""A CSV cell starting with one of these is run as a formula by a spreadsheet."""


def trials_frame(arm: ArmSeries) -> pd.DataFrame:
    """The arm's trials as a DataFrame (NaN where a value was missing), warm-ups included."""
    frame = pd.DataFrame({name: np.frombuffer(col) for name, col in arm.columns.items()})
    frame["battery_state"] = pd.Series(arm.battery_states(), dtype="object")
    return frame


TABLES = ("trials", "telemetry")
"""What `anemon export --table` writes: the trials (the default) or the host's readings."""
TIME_COLUMNS = ("t", "placed_t", "app_t", "load_changed_t")
"""Seconds, to the millisecond (a session's times are sums: 1745.5000000000002 otherwise)."""


TABLE_ROWS = 65_536
"""Rows of an exported table made, tidied and written at a time (`table_parts`): the whole
table tidied, then made one text, was most of a big recording's export (a 400 MB recording's
telemetry as CSV peaked at 1.26 GB)."""


def export_table(session: Session, table: str = "trials") -> pd.DataFrame:
    """One of `TABLES`, its own columns only: every trial (warm-ups flagged), or every
    telemetry reading, in time order (`table_parts`, whole)."""
    return whole(table_parts(session, table))


def whole(parts: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """A table from its parts, its columns' types as the whole table's own: a text column
    with no text in one part is of objects there (pandas makes one with text `str`), and
    would make the whole of objects; such a column's type is found again over the whole."""
    parts = list(parts)
    table = pd.concat(parts, ignore_index=True)
    mixed = [name for name in table.columns if len({part[name].dtype for part in parts}) > 1]
    if mixed:
        table[mixed] = table[mixed].infer_objects()
    return table


def table_parts(
    session: Session, table: str = "trials", rows: int = TABLE_ROWS
) -> Iterator[pd.DataFrame]:
    """`export_table`'s table, `rows` rows at a time, each tidied (`_tidy`); one empty part
    (columns arm and t) when there is none. In time order: a stable sort where the rows are
    not already (an A/B recording's arms, a clock that went back)."""
    if table == "trials":
        frame = _trials(session)
        if frame is None:
            yield pd.DataFrame(columns=["arm", "t"])
            return
        order = _time_order(frame["t"])
        for start in range(0, len(frame), rows):
            yield _tidy(frame.iloc[order[start : start + rows]].reset_index(drop=True))
        return
    readings = session.telemetry
    if not readings:
        yield pd.DataFrame(columns=["arm", "t"])
        return
    order = _time_order(_times(readings.columns(names=("t",))))
    for start in range(0, len(readings), rows):
        index = order[start : start + rows]
        lo, hi = int(index.min()), int(index.max()) + 1  # the rows' own range, in time order
        part = _telemetry(readings.columns(lo, hi)).iloc[index - lo]
        yield _tidy(part.reset_index(drop=True))


def _time_order(t: pd.Series) -> np.ndarray:
    """The rows' places in time order: as they are, or stably sorted by `t`."""
    t = t.reset_index(drop=True)
    if t.is_monotonic_increasing:  # else the stable sort of a table in order is a copy of it
        return np.arange(len(t))
    return t.sort_values(kind="stable").index.to_numpy()


def _times(columns: Columns) -> pd.Series:
    """The readings' times (`columns` of `t` alone), those kept as they came as they came."""
    t = pd.Series(columns.numbers["t"])
    if columns.odd:
        t = t.astype(object)
        for i, event in columns.odd.items():
            t[i] = event.t
    return t


def _trials(session: Session) -> pd.DataFrame | None:
    frames = []
    for arm in session.arms.values():
        frame = trials_frame(arm)
        frame.insert(0, "arm", arm.name)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else None


_TELEMETRY_COLUMNS = (
    "arm", "t",
    *(f.name for f in dataclasses.fields(TelemetryEvent)
      if f.name not in ("t", "wall", "arm", "source")),
    "source",  # last: the columns before it keep their places
)  # fmt: skip


def _telemetry(columns: Columns) -> pd.DataFrame:
    """Readings from their columns (`Readings.columns`): an event and a dict made per reading
    were most of a big recording's telemetry export (~1 KB a reading, held at once). A
    reading kept as it came has its values as they came."""
    values = {**columns.texts, **columns.numbers}
    values = {name: values[name] for name in _TELEMETRY_COLUMNS}
    for i, event in columns.odd.items():
        for name, column in values.items():
            if column.dtype != object:
                column = values[name] = column.astype(object)
            column[i] = getattr(event, name)
    return pd.DataFrame(values)


def _tidy(table: pd.DataFrame) -> pd.DataFrame:
    """Readable types: thermal as names, flags as nullable booleans (warm-up, charging,
    plugged), counts as nullable integers, readings as floats (a recorded value that is not a
    number, which only a damaged recording has, is NaN), times to the millisecond."""
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
    for column in TIME_COLUMNS:
        if column in table:
            table[column] = pd.to_numeric(table[column], errors="coerce").round(3)
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


def write_table(
    table: pd.DataFrame | Iterable[pd.DataFrame], fmt: str, out: Path | None,
    title: str | None = None,
) -> str | None:  # fmt: skip
    """Write the table (a frame, or its parts in order: `table_parts`) to `out` (replaced
    whole: `paths.replacing`) a part at a time, or return the text for stdout (Parquet needs
    `out`, and is written whole: one schema for all its rows); Markdown under `title`
    (`render.title`)."""
    parts = [table] if isinstance(table, pd.DataFrame) else table
    if fmt == "parquet":
        _write_parquet(whole(parts), out)
        return None
    texts = _texts(iter(parts), fmt, title)
    if out is None:
        return "".join(texts)
    with replacing(out) as temp, temp.open("w", encoding="utf-8") as file:
        file.writelines(texts)
    return None


def _texts(parts: Iterator[pd.DataFrame], fmt: str, title: str | None) -> Iterator[str]:
    """The table's text in `fmt` (csv, json, md), a part at a time: the same text as the
    whole table's (CSV's header, JSON's brackets and Markdown's head once)."""
    first = next(parts)
    if fmt == "csv":
        yield csv_safe(first).to_csv(index=False)
        yield from (csv_safe(part).to_csv(index=False, header=False) for part in parts)
    elif fmt == "json":
        yield "[\n" + _json_rows(first)
        yield from (",\n" + _json_rows(part) for part in parts)
        yield "\n]\n"
    else:
        yield (f"### {_md_cell(title)}\n\n" if title else "") + _markdown_head(first)
        yield _markdown_rows(first)
        yield from (_markdown_rows(part) for part in parts)


def _json_rows(part: pd.DataFrame) -> str:
    """The part's records as `to_json(orient="records", indent=1)` writes them, without the
    list's brackets around them."""
    return part.to_json(orient="records", indent=1).removeprefix("[\n").removesuffix("\n]")


def _write_parquet(table: pd.DataFrame, out: Path | None) -> None:
    if out is None:
        raise AnemonError("--format parquet writes a binary file: give it one with -o OUT")
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise AnemonError(
            f"Parquet needs pyarrow: {PARQUET_INSTALL} in anemon's folder (or use --format csv)"
        ) from None
    with replacing(out) as temp:
        table.to_parquet(temp, index=False)


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


def _markdown_head(table: pd.DataFrame) -> str:
    """A Markdown table's head; each cell literal text: control characters escaped, `|` too."""
    columns = [_md_cell(c) for c in table.columns]
    return "| " + " | ".join(columns) + " |\n|" + "---|" * len(columns) + "\n"


def _markdown_rows(table: pd.DataFrame) -> str:
    buffer = io.StringIO()
    for row in table.itertuples(index=False):
        cells = ("" if pd.isna(v) else _md_cell(v) for v in row)
        buffer.write("| " + " | ".join(cells) + " |\n")
    return buffer.getvalue()


def _md_cell(value: object) -> str:
    return printable(str(value)).replace("|", "\\|")


# -- SQLite ---------------------------------------------------------------------------------

_NAME = re.compile(r"[a-z_][a-z0-9_]*")
"""Every table and column name: fixed in this module, never taken from the input."""
SESSION_COLUMNS = (
    ("source", "TEXT"), ("tag", "TEXT"), ("created", "TEXT"), ("device", "TEXT"),
    ("udid", "TEXT"), ("backend", "TEXT"), ("os_build", "TEXT"), ("host", "TEXT"),
    ("anemon", "TEXT"), ("recording_version", "INTEGER"), ("exported_by", "TEXT"),
)  # fmt: skip
"""The one row of `sessions`: what the recording's header and START lines say."""
TRIAL_SQL = (("arm", "TEXT"), ("t", "REAL"), ("placed_t", "REAL"), ("app_t", "REAL"),
             ("trial", "INTEGER"), ("warmup", "INTEGER"), ("round", "INTEGER"),
             ("prompt_tps", "REAL"), ("decode_tps", "REAL"), ("gen", "INTEGER"),
             ("battery", "REAL"),
             ("thermal", "TEXT"), ("free_gb", "REAL"), ("battery_state", "TEXT"))  # fmt: skip
"""The trial rows of the CSV export, column for column (without `kind`)."""
TELEMETRY_SQL = (("arm", "TEXT"), ("t", "REAL"), ("battery", "REAL"),
                 ("battery_state", "TEXT"), ("temperature_c", "REAL"), ("free_gb", "REAL"),
                 ("total_gb", "REAL"), ("power_w", "REAL"), ("charging", "INTEGER"),
                 ("plugged", "INTEGER"), ("load_w", "REAL"), ("power_in_w", "REAL"),
                 ("battery_power_w", "REAL"), ("load_changed_t", "REAL"), ("pid", "INTEGER"),
                 ("cpu_pct", "REAL"), ("mem_gb", "REAL"), ("gpu_pct", "REAL"),
                 ("source", "TEXT"))  # fmt: skip
ROUND_SQL = (("arm", "TEXT"), ("round", "INTEGER"), ("trials", "INTEGER"),
             ("decode_mean", "REAL"), ("prefill_mean", "REAL"))  # fmt: skip
_TEXT_FIELDS = frozenset({"thermal_start", "thermal_end"})
"""Summary keys written as names (thermal), whatever their Python type."""


def arm_columns() -> tuple[tuple[str, str], ...]:
    """The `arms` table: every per-arm summary key, typed from ArmSummary's own fields; its
    `rounds` is a count here (each round is a row of the `rounds` table)."""
    columns = []
    for f in dataclasses.fields(ArmSummary):
        if f.name == "rounds":
            columns.append(("rounds", "INTEGER"))
        elif f.name in _TEXT_FIELDS:
            columns.append((f.name, "TEXT"))
        else:
            base = str(f.type).removesuffix(" | None")
            columns.append((f.name, {"int": "INTEGER", "float": "REAL", "bool": "INTEGER"}
                                    .get(base, "TEXT")))  # fmt: skip
    columns.append(("summary_version", "INTEGER"))  # the rules the figures follow, last
    return tuple(columns)


def write_sqlite(loaded: Loaded, out: Path | None, source: str) -> None:
    """A SQLite database at `out` (replaced whole, as the other formats replace their file:
    `paths.replacing`): tables sessions, arms, rounds, trials, telemetry. The old database's
    journals go first: SQLite would apply them to the new file."""
    if out is None:
        raise AnemonError("--format sqlite writes a binary file: give it one with -o OUT")
    with replacing(out) as temp:
        with contextlib.closing(sqlite3.connect(temp)) as db:
            _fill(db, loaded, source)
            db.commit()
        _remove_journals(out)


_SQL_ROWS = 10_000
"""Rows of a table made into records at a time (`_records`)."""
_JOURNALS = ("-wal", "-shm", "-journal")
"""What SQLite keeps beside a database `X` (`X-wal`, ...) and reads as that database's."""


def _remove_journals(db: Path) -> None:
    """A replaced database's journals, before the new file takes its name: a stale `-wal` or
    a hot `-journal` (a writer killed mid-transaction) would be applied to the new file.
    Beside a symlink's target too: SQLite names them after the file the link leads to."""
    for name in {os.fspath(db), os.path.realpath(db)}:
        for suffix in _JOURNALS:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name + suffix)


def _fill(db: sqlite3.Connection, loaded: Loaded, source: str) -> None:
    session, header = loaded.session, loaded.header or {}
    summaries = summarize(session, loaded.readings)
    _insert(db, "sessions", SESSION_COLUMNS, [_session_row(session, source, header)])
    _insert(db, "arms", arm_columns(), [_arm_row(s) for s in summaries])
    rounds = [{"arm": s.arm, "round": i, **dataclasses.asdict(r)}
              for s in summaries for i, r in enumerate(s.rounds, start=1)]  # fmt: skip
    _insert(db, "rounds", ROUND_SQL, rounds)
    _insert(db, "trials", TRIAL_SQL, _records(table_parts(session, "trials")))
    _insert(db, "telemetry", TELEMETRY_SQL, _records(table_parts(session, "telemetry")))


def _session_row(session: Session, source: str, header: Mapping[str, Any]) -> dict[str, object]:
    device = header.get("device")
    device = device if isinstance(device, dict) else {}
    plan = header.get("plan")
    starts = [arm.start for arm in session.arms.values() if arm.start is not None]
    tag = plan.get("tag") if isinstance(plan, dict) else None
    return {
        "source": source,
        "tag": tag or next((s.tag for s in starts if s.tag), None),
        "created": header.get("created"),
        "device": device.get("name"),
        "udid": device.get("udid"),
        "backend": device.get("kind"),
        "os_build": next((s.os for s in starts if s.os), None) or device.get("os"),
        "host": header.get("host"),
        "anemon": header.get("anemon"),
        "recording_version": header.get("version"),
        "exported_by": __version__,
    }


def _arm_row(summary: ArmSummary) -> dict[str, object]:
    row = summary.to_json()
    row["rounds"] = len(summary.rounds)
    return row


def _records(parts: Iterable[pd.DataFrame]) -> Iterator[dict[str, object]]:
    """The rows of a table's parts as dicts, `_SQL_ROWS` made at a time: the whole table's
    list of dicts (twice over) was most of a big recording's sqlite export (1.3 GiB for
    100 MB)."""
    for frame in parts:
        for start in range(0, len(frame), _SQL_ROWS):
            for row in frame.iloc[start : start + _SQL_ROWS].to_dict("records"):
                yield {str(k): v for k, v in row.items()}


def _insert(
    db: sqlite3.Connection,
    table: str,
    columns: Sequence[tuple[str, str]],
    rows: Iterable[Mapping[str, object]],
) -> None:
    names = [name for name, _ in columns]
    assert all(_NAME.fullmatch(n) for n in (table, *names)), "a name not from the fixed lists"
    spec = ", ".join(f'"{name}" {kind}' for name, kind in columns)
    db.execute(f'CREATE TABLE "{table}" ({spec})')
    marks = ", ".join("?" * len(names))
    types = [kind for _, kind in columns]
    db.executemany(
        f'INSERT INTO "{table}" VALUES ({marks})',
        ([_sql_value(row.get(n), kind) for n, kind in zip(names, types, strict=True)]
         for row in rows),
    )  # fmt: skip


def _sql_value(value: object, kind: str) -> object:
    """A cell as SQLite stores it: missing (None, NaN, pd.NA, infinite) is NULL; flags 0/1;
    numbers of the column's type; text as it is (data, bound as a parameter, never SQL);
    anything else as JSON text."""
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    if kind == "INTEGER" and isinstance(value, bool | int | float):
        return int(value) if float(value).is_integer() else None
    if kind == "REAL" and isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        return value
    return json.dumps(value, default=str)
