"""The whole-file commands' figures read as the file is read (analysis/load.py): the host
readings' rows are let go once read, and the summaries are those of the whole session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from anemon.analysis import load
from anemon.analysis.load import load_sessions
from anemon.analysis.summary import summarize
from anemon.recording import reader
from anemon.recording.codec import to_record
from anemon.recording.reader import SourceReader, open_source
from anemon.recording.writer import make_header
from tests.analysis.test_growing_readings import generated

RECORDINGS = Path(__file__).resolve().parents[2] / "recordings"
SPEC_EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "spec_example.log"


def written(tmp_path: Path, seed: int) -> Path:
    """`generated`'s session (late, charging, system-load and process readings) as a recording."""
    lines = [json.dumps(make_header("x"))]
    lines += [json.dumps(to_record(event)) for event in generated(seed)]
    path = tmp_path / f"generated-{seed}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("every", [1, 7, 64, 100_000])
def test_figures_read_as_the_file_is_read_are_the_whole_sessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, every: int
) -> None:
    """Read every `every` readings and let go (one read at the end for 100,000), the
    summaries are those of the session read whole and summarized afterwards, to the bit."""
    monkeypatch.setattr(load, "READ_EVERY", every)
    sources = [written(tmp_path, seed) for seed in range(3)]
    sources += sorted(RECORDINGS.glob("sim-*.jsonl"))
    for source in [*sources, SPEC_EXAMPLE]:  # a raw log's trials are added a run at a time
        (kept,) = load_sessions([source])
        (lean,) = load_sessions([source], rows=False, charts=False)
        whole = summarize(kept.session)  # its readings read from its rows, at once
        assert summarize(lean.session, lean.readings) == whole, source.name
        assert summarize(kept.session, kept.readings) == whole, source.name
        assert len(lean.session.telemetry) == len(kept.session.telemetry), source.name
        # the battery let go once read, the charts' series never kept
        assert lean.session.battery.count == kept.session.battery.count > 0, source.name
        assert not len(lean.session.battery.t), source.name
        assert not len(lean.session.thermal.t) and not len(lean.session.free_gb.t), source.name
        assert len(kept.session.thermal.t) > 0, source.name


def test_without_rows_the_readings_are_let_go_and_cannot_be_asked_for(tmp_path: Path) -> None:
    (lean,) = load_sessions([written(tmp_path, 0)], rows=False)
    (kept,) = load_sessions([written(tmp_path, 0)])
    assert kept.session.telemetry[0].wall == generated(0)[0].wall
    assert lean.readings.read == len(lean.session.telemetry) == len(kept.session.telemetry)
    with pytest.raises(IndexError, match="released"):
        lean.session.telemetry[0]
    with pytest.raises(IndexError, match="released"):
        summarize(lean.session)  # its figures need the readings read with it


@pytest.mark.parametrize("rows", [False, True])
def test_without_figures_no_reading_is_read_and_the_rows_are_as_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows: bool
) -> None:
    """An export of the trials reads nothing for the figures (its readings grew with the
    file, ~0.3 MiB a MB, and were never used); its rows are let go as they come, held as
    they came for an export of the telemetry."""
    monkeypatch.setattr(load, "READ_EVERY", 7)
    source = written(tmp_path, 1)
    (kept,) = load_sessions([source])
    (bare,) = load_sessions([source], rows=rows, charts=False, figures=False)
    assert not len(bare.readings) and bare.readings.read == 0
    assert len(bare.session.telemetry) == len(kept.session.telemetry) > 7
    assert bare.session.telemetry.held == (len(kept.session.telemetry) if rows else 0)
    assert bare.session.arms.keys() == kept.session.arms.keys()
    for name, arm in bare.session.arms.items():
        columns = kept.session.arms[name].columns
        assert {k: v.tobytes() for k, v in arm.columns.items()} == {
            k: v.tobytes() for k, v in columns.items()
        }, name  # as bytes: NaN is not equal to itself


def test_a_recording_read_for_its_figures_is_made_a_block_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`runs()` gives a recording's events as iterating does, made `_BLOCK` at a time (the
    whole-file commands pause the collector themselves), never a whole batch ahead."""
    path = RECORDINGS / "sim-sustain-1b-v2.jsonl"
    monkeypatch.setattr(reader, "_BLOCK", 100)
    made = 0
    original = SourceReader._recorded_lines

    def counted(self: SourceReader, numbered: object) -> object:
        nonlocal made
        for event in original(self, numbered):  # type: ignore[arg-type]
            made += 1
            yield event

    monkeypatch.setattr(SourceReader, "_recorded_lines", counted)
    events = []
    for event in open_source(path).runs():
        events.append(event)
        assert made - len(events) < 100
    assert len(events) > 3_000 and events == list(open_source(path))
