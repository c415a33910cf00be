"""SOURCEs into Sessions: all of them checked before any is read, so bad input fails fast."""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from anemon.analysis.summary import EnergyReadings
from anemon.parsing.columnar import TextRun, TrialRun
from anemon.recording.reader import (
    LineWarning,
    SourceReader,
    no_records,
    open_source,
    paused_gc,
)
from anemon.store import Session
from anemon.store.session import battery_codes

BENCH_KINDS = ("start", "load", "trial", "idle", "end", "error")
"""The line protocol's records; a SOURCE with none of them is not a bench log."""
READ_EVERY = 65_536
"""Host readings held at most before the figures read them and their rows are let go
(`read_session`)."""


@dataclass(frozen=True, slots=True)
class Loaded:
    path: Path
    session: Session
    warnings: int
    """Lines that were torn, too long, not JSON, or with values that did not parse."""
    readings: EnergyReadings
    """The session's readings for its energy and process figures, read as they came (the
    session's own rows of them may have been let go: `read_session`)."""
    device: str | None = None
    """The device backend a recording was made with (a kind of `anemon.devices.DEVICE_KINDS`);
    None for a raw log or a recording that does not say."""
    listed: tuple[LineWarning, ...] = ()
    """The first warnings (recording.reader.MAX_LISTED), each with its line number."""
    header: dict[str, Any] | None = None
    """A recording's header line (None: a raw log or another tool's record)."""


def load_sessions(
    paths: Sequence[Path], *, rows: bool = True, charts: bool = True, figures: bool = True
) -> Iterator[Loaded]:
    """Each SOURCE's session, in order; NoRecordsError for one without a bench record.
    `rows`, `charts`, `figures`: what is kept of its host readings (`read_session`); without
    rows its figures take `Loaded.readings`."""
    readers: list[SourceReader] = []
    try:
        readers.extend(open_source(path) for path in paths)
        for reader in readers:
            session, readings = read_session(reader, rows=rows, charts=charts, figures=figures)
            if not any(session.counts[kind] for kind in BENCH_KINDS):
                raise no_records(reader.path)
            yield Loaded(reader.path, session, reader.warnings, readings, reader.device_kind,
                         tuple(reader.listed), reader.header)  # fmt: skip
    finally:  # a later SOURCE refused: the earlier ones' streams are closed, not left to gc
        for reader in readers:
            reader.close()


def read_session(
    reader: SourceReader, *, rows: bool = True, charts: bool = True, figures: bool = True
) -> tuple[Session, EnergyReadings]:
    """The SOURCE's Session, as `Session.from_events(reader)` gives it, but with a raw log's
    plain TRIAL lines added a run at a time (anemon/parsing/columnar.py), and the readings of
    its figures (`EnergyReadings`), read every `READ_EVERY` host readings. Without `rows`
    the session lets go of the host readings' rows once read (`Readings.release`; a command
    that needs only the figures), without `charts` it keeps no chart series of theirs
    (`Session.charts`; a command that draws none): they were most of a big recording's
    memory. Without `figures` nothing is read for the figures (the readings stay empty: an
    export of the trials, whose readings grew with the file and were never used).

    One difference, on purpose: those lines, and its runs of plain text lines (counted), are
    not events, so the session's `log` (the log panel's latest lines) holds only the lines
    read one by one; `log_total` counts all.

    What was read is then frozen out of the garbage collector's reach (`gc.freeze`), before
    collections resume: it lives as long as the command, and the first collection after the
    pause, and every full one while summarizing, would scan it all again (for 20,000
    one-trial arms ~0.2 s of the reading and a third of their summary's CPU)."""
    session, readings = Session(charts=charts), EnergyReadings()
    read = readings if figures else None
    with paused_gc():  # a session of 100,000 arms: a fifth of its reading was collections
        for item in reader.runs():
            if isinstance(item, TrialRun):
                add_trials(session, item)
            elif isinstance(item, TextRun):
                add_text(session, item)
            else:
                session.add(item)
                read_readings(session, read, release=not rows, when_due=True)
        read_readings(session, read, release=not rows)
        gc.freeze()  # before collections resume: the first would scan everything read
    return session, readings


def read_readings(
    session: Session, readings: EnergyReadings | None, *, release: bool, when_due: bool = False
) -> None:
    """`readings.update(session)` (`when_due`: once `READ_EVERY` host readings have come
    since the last; None: no figures are made, nothing is read), and with `release` the
    session's rows of them then let go (`Readings.release`), and its battery series too
    where no chart draws it (`Series.release`)."""
    unread = session.telemetry.held if readings is None else len(session.telemetry) - readings.read
    if when_due and unread < READ_EVERY:
        return
    if readings is not None:
        readings.update(session)
    if release:
        session.telemetry.release()
        if not session.charts:  # else drawn (a replay's --overlay)
            session.battery.release()


def add_text(session: Session, run: TextRun) -> None:
    """What `session.add` does for each TextEvent of `run`, but the log panel's lines."""
    session.version += run.count
    session.counts["text"] += run.count
    session.log_total += run.count
    if session.first_t is None:
        session.first_t = run.t
    session.last_t = max(session.last_t, run.t)
    if run.arm is not None:
        session.current_arm = run.arm


def add_trials(session: Session, run: TrialRun) -> None:
    """What `session.add` does for each TRIAL event of `run`, a column at a time."""
    count = len(run)
    if not count:
        return
    session.version += count
    session.counts["trial"] += count
    session.log_total += count
    t = run.t
    if session.first_t is None:
        session.first_t = float(t[0])
    session.last_t = max(session.last_t, float(t.max()))
    if run.arm is not None:
        session.current_arm = run.arm
    arm = session.arm(run.arm or "(no arm)")
    fields = run.fields
    columns = arm.columns
    missing = np.full(count, np.nan)
    for name, column in columns.items():
        if name == "t":
            values = t
        elif name == "placed_t":  # never before the arm's previous trial, as `add_trial`
            placed = arm.place_block(t, fields.get("app_t", missing))
            floor = column[-1] if len(column) else -np.inf
            values = np.maximum.accumulate(np.maximum(placed, floor))
        elif name == "round":
            values = np.full(count, float(max(arm.rounds, 1)))
        elif name == "warmup":
            values = fields.get("warmup", np.zeros(count))
            session.timed_trials += int(np.count_nonzero(values == 0))
        else:
            values = fields.get("app_t" if name == "app_t" else name, missing)
        column.frombytes(np.ascontiguousarray(values, dtype=float).tobytes())
    states = fields.get("battery_state") or [None] * count
    arm.battery_state.extend(battery_codes(states))
    for series, name in ((session.thermal, "thermal"), (session.battery, "battery"),
                         (session.free_gb, "free_gb")):  # fmt: skip
        if (read := fields.get(name)) is not None:
            series.extend_present(t, read)
    last = next((state for state in reversed(states) if state is not None), None)
    if last is not None:
        session.battery_state = last
