"""The columnar path (anemon/parsing/columnar.py) gives exactly what the per-line path gives.

Both read the same file: the per-line path is `Session.from_events(open_source(path))`, the
columnar path `read_session(open_source(path))`. Their summaries (as JSON), warnings (count
and listed lines), export rows and sessions' columns must be identical. Every test runs with
each way the columnar path splits a block: the compiled scanner and the regular expression.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from anemon.analysis.export import TABLES, export_table
from anemon.analysis.load import read_session
from anemon.analysis.summary import summarize
from anemon.parsing import columnar
from anemon.recording.reader import MAX_LINE, open_source
from anemon.store import Session
from tests.fuzz.mutations import encode, hostile_log

RECORDINGS = Path(__file__).parents[2] / "recordings"
SPEC_EXAMPLE = Path(__file__).parents[1] / "data" / "spec_example.log"
THERMAL = ("nominal", "fair", "serious", "critical", "0", "3", "Serious")
SCANNERS = ("compiled", "regex") if columnar._scan is not None else ("regex",)
"""The compiled scanner where the install built it (tests/parsing/test_scan.py checks it is)."""


@pytest.fixture(autouse=True, params=SCANNERS)
def scanner(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test once per way of splitting a block."""
    if request.param == "regex":
        monkeypatch.setattr(columnar, "_scan", None)
    return str(request.param)


def _both(path: Path) -> tuple[tuple[object, ...], tuple[object, ...]]:
    per_line = open_source(path)
    by_line = Session.from_events(per_line)
    columnar = open_source(path)
    by_column, _ = read_session(columnar)
    return _seen(by_line, per_line), _seen(by_column, columnar)


def _seen(session: Session, reader: object) -> tuple[object, ...]:
    """Everything a whole-file command reads of a session, as comparable values."""
    summary = json.dumps([arm.to_json() for arm in summarize(session)], sort_keys=True)
    export = [export_table(session, table).to_csv(index=False) for table in TABLES]
    arms = {
        name: ({col: bytes(values) for col, values in arm.columns.items()},
               arm.battery_state, arm.rounds, arm.errors, arm.start, arm.load, arm.end)
        for name, arm in session.arms.items()
    }  # fmt: skip
    series = [
        (bytes(s.t), bytes(s.value)) for s in (session.thermal, session.battery, session.free_gb)
    ]
    state = (
        dict(session.counts), session.warnings, session.first_t, session.last_t,
        session.current_arm, session.battery_state, session.version, session.log_total,
    )  # fmt: skip
    listed = tuple(reader.listed)
    return summary, export, arms, series, state, reader.warnings, listed


def _plain_log(rng: random.Random, count: int) -> list[str]:
    """A log of plain TRIAL lines (the columnar path's own) with the edges it must hand back
    or get right: bad and out-of-range values mid-run, arms changing, missing keys, another
    key order, unknown keys, `-1` and fractional battery, warm-ups, timestamps, relaunches."""
    lines: list[str] = []
    arms = ("a_ane", "b_gpu")
    for i in range(count):
        if i % 700 == 0:
            arm = arms[(i // 700) % 2]
            lines.append(f"START arm={arm} model=M compute=ane bits=8 free_gb=38.2 mode=sustain")
        words = [
            f"arm={rng.choice(arms) if rng.random() < 0.02 else arm}",
            f"trial={i}",
            f"warmup={rng.choice(('0', '1', 'true', 'no'))}",
            f"t={i * 4.5 if rng.random() > 0.01 else rng.choice(('-1', 'x', '1e99', '5'))}",
            f"prompt_tps={rng.uniform(1000, 4000):.1f}",
            f"decode_tps={rng.choice((f'{rng.uniform(20, 80):.1f}', '50'))}",
            f"gen={rng.choice(('256', '256.0', '12'))}",
            f"battery={rng.choice(('95', '-1', '0.5', '100', '0.95'))}",
            f"battery_state={rng.choice(('charging', 'unplugged', 'Full'))}",
            f"thermal={rng.choice(THERMAL)}",
            f"free_gb={rng.uniform(1, 60):.2f}",
        ]
        if rng.random() < 0.003:
            words[rng.randrange(len(words))] += rng.choice(("x", "nan", "inf", "e999", "_1"))
        if rng.random() < 0.003:
            words.pop(rng.randrange(1, len(words)))
        if rng.random() < 0.002:
            words.append("extra_key=1")
        if i % 2000 > 1500:  # a stretch with another key order
            words.reverse()
        line = "TRIAL " + " ".join(words)
        roll = rng.random()
        if roll < 0.002:
            line = "2026-01-02T03:04:05Z " + line
        elif roll < 0.004:
            line = line.replace(" ", "  ", 1)
        elif roll < 0.005:
            line = "trial" + line[5:]
        lines.append(line)
        if i % 1500 == 1499:
            lines.append(f"END arm={arm} reason=done trials={i}")
    return lines


def _write(tmp_path: Path, lines: list[str], seed: int) -> Path:
    path = tmp_path / "bench.log"
    path.write_bytes(encode(lines, random.Random(seed)))
    return path


@pytest.mark.parametrize("seed", [1, 2])
def test_hostile_log_gives_the_same_results(tmp_path: Path, seed: int):
    path = _write(tmp_path, hostile_log(seed, 20_000), seed)
    by_line, by_column = _both(path)
    assert by_column == by_line


@pytest.mark.parametrize("seed", [3, 4])
def test_plain_log_with_edges_gives_the_same_results(tmp_path: Path, seed: int):
    path = _write(tmp_path, _plain_log(random.Random(seed), 20_000), seed)
    by_line, by_column = _both(path)
    assert by_column == by_line
    assert by_line[-2] > 0  # the edges were there: some values were refused


def test_a_line_cut_short_is_listed_in_line_order(tmp_path: Path):
    lines = _plain_log(random.Random(5), 300)
    lines[100] = "TRIAL arm=a trial=x gen=" + "9" * (MAX_LINE + 10)
    lines[50] = "TRIAL arm=a trial=1 gen=oops"
    path = _write(tmp_path, lines, 5)
    by_line, by_column = _both(path)
    assert by_column == by_line
    numbers = [warning.line for warning in by_column[-1]]
    assert 51 in numbers and 101 in numbers
    assert numbers == sorted(numbers)


@pytest.mark.parametrize("path", [SPEC_EXAMPLE, *sorted(RECORDINGS.glob("*.jsonl"))])
def test_sample_sources_give_the_same_results(path: Path):
    by_line, by_column = _both(path)
    assert by_column == by_line


def test_lines_cut_short_in_a_row_and_across_blocks_are_listed_in_line_order(tmp_path: Path):
    lines = _plain_log(random.Random(6), 12_000)
    long = "9" * (MAX_LINE + 10)
    for index in (100, 101, 5000, 9000, 11_999):
        lines[index] = f"TRIAL arm=a trial=x gen={long}"
    lines[102] = "TRIAL arm=a trial=1 gen=oops"
    path = _write(tmp_path, lines, 6)
    by_line, by_column = _both(path)
    assert by_column == by_line
    numbers = [warning.line for warning in by_column[-1]]
    assert {101, 102, 103, 5001, 9001, 12_000} <= set(numbers)
    assert numbers == sorted(numbers)


def test_runs_of_a_few_trials_are_parsed_not_converted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A log of one-trial arms (issue 21: thousands of them) converts no column, a run per arm
    costing more than its lines' parse; a long run still goes by columns. Same results."""
    from tests.many_arms import write_many_arms

    converted: list[int] = []
    convert = columnar._convert

    def counted(columns):
        converted.append(len(next(iter(columns.values()))))
        return convert(columns)

    monkeypatch.setattr(columnar, "_convert", counted)
    by_line, by_column = _both(write_many_arms(tmp_path / "arms.log", 50))
    assert by_line == by_column
    assert converted == []
    long_run = tmp_path / "long.log"
    long_run.write_text("".join(
        f"TRIAL arm=a trial={n} warmup=0 t={n}.0 decode_tps=50.0 gen=256\n" for n in range(40)
    ))  # fmt: skip
    by_line, by_column = _both(long_run)
    assert by_line == by_column
    assert converted == [40]


TEXT_LINES = (
    "",
    " ",
    "\t",
    "loading weights",
    "  indented TRIAL arm=x",
    "trial arm=x trial=1",
    "\u017ftart arm=x",
    "Start arm=z",
    "[tag] TRIAL arm=a",
    "[x] plain",
    "2026-01-01T00:00:00Z text",
    "2026-01-01T00:00:01Z TRIAL arm=a trial=1 t=1.0 decode_tps=9",
    "12 apples",
    "\ufeffBOM text",
    "oops ERROR: bad",
    "ERROR: lone",
    "END",
    "end arm=a reason=done",
    "IDLE battery=50",
    "text with = signs a=b",
    "\x00\x01 control",
    "é ünïcode",
    "x\rcarriage",
)
"""Lines around the plain-text rule's edges: text, and lines that only look like it (a record
in lower case or with a long s, a timestamp, a tag, a byte-order mark, an error)."""


@pytest.mark.parametrize("seed", [7, 8])
def test_runs_of_text_lines_give_the_same_results(tmp_path: Path, seed: int) -> None:
    """Text lines (empty ones, notes between records, before the first, at the end), counted
    a run at a time, give the same session, warnings and summary as each line parsed."""
    rng = random.Random(seed)
    lines = [rng.choice(TEXT_LINES) for _ in range(30)]
    for line in _plain_log(rng, 3000):
        lines.append(line)
        lines.extend(rng.choice(TEXT_LINES) for _ in range(rng.choice((0, 0, 1, 5))))
    path = _write(tmp_path, lines, seed)
    by_line, by_column = _both(path)
    assert by_column == by_line


def test_plain_text_lines_are_counted_not_parsed(tmp_path: Path) -> None:
    """A log of mostly empty lines (issue 26: 16 MiB of them took 93 s to summarize) gives its
    text as counts, not an event per line."""
    from anemon.parsing.columnar import TextRun

    path = tmp_path / "empty.log"
    path.write_text("START arm=a\n" + "\n" * 20_000 + "TRIAL arm=a trial=0 decode_tps=5\n\n\n")
    items = list(open_source(path).runs())
    assert [len(item) for item in items if isinstance(item, TextRun)] == [20_000, 2]
    assert len(items) == 4
    by_line, by_column = _both(path)
    assert by_column == by_line


def test_text_lines_before_a_run_of_trials_keep_their_own_time(tmp_path: Path) -> None:
    """Text first, then a run of trials read as columns: the text's time is the log's start,
    not the trials' (the run moves the log's time before it comes)."""
    path = tmp_path / "notes.log"
    path.write_text("booting\n\n" + "".join(
        f"TRIAL arm=a trial={n} t={10 + n}.0 decode_tps=5 gen=256\n" for n in range(20)
    ))  # fmt: skip
    by_line, by_column = _both(path)
    assert by_column == by_line
    assert by_column[4][2] == 0.0  # first_t: the text's
