"""100,000 mutated protocol lines through the parser, the session store, `summary` in every
format, `export` in every format and `replay`: no exception, every line accounted for.

The lines come from tests/fuzz/mutations.py (seeded); bench/fuzz.py runs a million of them.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import random
from pathlib import Path

import pandas as pd
import pytest
from rich.console import Console

from anemon.analysis import render
from anemon.analysis.export import export_table, write_table
from anemon.analysis.load import load_sessions
from anemon.analysis.summary import summarize
from anemon.cli import main
from anemon.events import RecordEvent, TrialEvent
from anemon.recording.reader import open_source
from anemon.recording.writer import Recorder, make_header
from anemon.store import Session
from anemon.text import printable
from tests.fuzz.mutations import encode, hostile_log

SEED = 20261201
LINES = 100_000
INT64 = 2**63 - 1


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> tuple[Path, list[str]]:
    lines = hostile_log(SEED, LINES)
    path = tmp_path_factory.mktemp("fuzz") / "hostile.log"
    path.write_bytes(encode(lines, random.Random(SEED)))
    return path, lines


@pytest.fixture(scope="module")
def events(hostile) -> list:
    path, _ = hostile
    return list(open_source(path))


def test_every_line_is_one_event(hostile, events):
    _, lines = hostile
    assert len(events) == len(lines)
    session = Session.from_events(events)
    assert sum(session.counts.values()) == len(lines)


def test_every_number_is_finite_and_in_range(events):
    for event in events:
        if not isinstance(event, RecordEvent):
            continue
        for field in dataclasses.fields(event):
            value = getattr(event, field.name)
            if isinstance(value, float):
                assert math.isfinite(value), (event.line, field.name)
            if isinstance(value, int) and not isinstance(value, bool):
                assert -INT64 <= value <= INT64, (event.line, field.name)
    trials = [e for e in events if isinstance(e, TrialEvent)]
    for trial in trials:
        for name in ("decode_tps", "prompt_tps", "gen", "prompt_tokens", "trial"):
            value = getattr(trial, name)
            assert value is None or value >= 0, (trial.line, name)


def test_arm_names_and_tags_are_printable(events):
    for event in events:
        for text in (getattr(event, "arm", None), getattr(event, "tag", None)):
            assert text is None or printable(text) == text, (event.line, text)


@pytest.fixture(scope="module")
def summaries(events) -> list:
    return summarize(Session.from_events(events))


@pytest.mark.parametrize("fmt", ["table", "md", "csv", "json"])
def test_summary_in_every_format(summaries, fmt):
    if fmt == "table":
        console = Console(file=io.StringIO(), width=120, color_system=None)
        console.print(render.rich_table(summaries, "hostile.log"))
        out = console.file.getvalue()
    else:
        out = {"md": render.markdown, "csv": render.to_csv, "json": render.to_json}[fmt](summaries)
    assert "\x1b" not in out  # no control sequence from the log reaches the terminal
    if fmt == "json":
        arms = json.loads(out, parse_constant=_refuse)
        assert len(arms) == len(summaries) and all(isinstance(a["arm"], str) for a in arms)
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(out)))
        assert len(rows) == len(summaries)
        assert not any(row["arm"].startswith(("=", "+", "@", "-")) for row in rows)


def test_the_summary_command(hostile, capsys):
    path, _ = hostile
    assert main(["summary", str(path), "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "internal error" not in err and "warning(s)" in err
    assert json.loads(out, parse_constant=_refuse)


@pytest.mark.parametrize("fmt", ["csv", "json", "md", "parquet"])
def test_export_in_every_format(events, fmt, tmp_path):
    session = Session.from_events(events)
    out = tmp_path / f"trials.{fmt}"
    write_table(export_table(session), fmt, out)
    trials = sum(len(arm) for arm in session.arms.values())
    if fmt == "parquet":
        assert len(pd.read_parquet(out)) == trials
    elif fmt == "csv":
        assert len(pd.read_csv(out)) == trials
    elif fmt == "json":
        assert len(json.loads(out.read_text(), parse_constant=_refuse)) == trials
    else:
        assert "\x1b" not in out.read_text()


def test_a_recording_of_it_replays_and_summarises_as_the_log(events, summaries, tmp_path, capsys):
    recording = tmp_path / "hostile.jsonl"
    with Recorder(recording, make_header("fuzz")) as recorder:
        for event in events:
            recorder.write(event)
    assert main(["replay", str(recording), "--headless", "--speed", "max"]) == 0
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "internal error" not in err
    assert "\x1b" not in out
    (loaded,) = load_sessions([recording])
    assert render.to_json(summarize(loaded.session)) == render.to_json(summaries)


def _refuse(constant: str) -> None:
    raise AssertionError(f"{constant} in JSON output")
