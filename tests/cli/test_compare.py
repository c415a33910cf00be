"""`anemon compare` end to end, in process: three recordings made by the simulator."""

from __future__ import annotations

import csv
import gc
import io
import json
import statistics
from pathlib import Path

import pytest

from anemon.analysis import compare
from anemon.cli import main
from anemon.recording.reader import open_source

RECORDINGS = Path(__file__).parents[2] / "recordings"
V1 = RECORDINGS / "sim-sustain-1b-v1.jsonl"
V2 = RECORDINGS / "sim-sustain-1b-v2.jsonl"
AB = RECORDINGS / "sim-ab-2b.jsonl"
GPU = "minicpm5_1b_gpu_int8"


def decode_mean(path: Path, arm: str) -> float:
    """The arm's mean decode over its timed trials, read from the recording's own events."""
    values = [
        e.decode_tps
        for e in open_source(path)
        if e.kind == "trial" and e.arm == arm and not e.warmup and e.decode_tps is not None
    ]
    return statistics.mean(values)


def compare_json(capsys, *args: str) -> dict:
    assert main(["compare", "--format", "json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_three_recordings_deltas_median_interval(capsys):
    """v1, v2, then v1 again: every arm is in three sessions."""
    data = compare_json(capsys, str(V1), str(V2), str(V1))
    assert data["sources"] == [str(V1), str(V2), str(V1)] and data["by"] == "arm"
    gpu = next(a for a in data["arms"] if a["arm"] == GPU)
    means = [decode_mean(V1, GPU), decode_mean(V2, GPU), decode_mean(V1, GPU)]
    delta = gpu["delta_pct"]["decode_mean"]
    assert delta[0] is None and delta[2] == pytest.approx(0.0)
    assert delta[1] == pytest.approx(100 * (means[1] - means[0]) / means[0])
    assert gpu["median"]["decode_mean"] == pytest.approx(statistics.median(means))
    lo, hi = gpu["ci95"]["decode_mean"]
    assert min(means) - 1e-9 <= lo <= hi <= max(means) + 1e-9  # numpy's mean vs statistics'
    assert compare_json(capsys, str(V1), str(V2), str(V1)) == data  # seeded


def test_by_compute_across_different_models(capsys):
    data = compare_json(capsys, str(V1), str(V2), str(AB), "--by", "compute")
    assert data["by"] == "compute"
    assert [a["arm"] for a in data["arms"]] == ["ane", "gpu"]
    gpu = data["arms"][1]
    assert [s["arm"] for s in gpu["sessions"]] == [GPU, GPU, "minicpm5_2b_gpu_int8"]
    assert "median" in gpu and "ci95" in gpu


def test_table_md_and_csv(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    assert main(["compare", str(V1), str(V2)]) == 0
    out = capsys.readouterr().out
    assert GPU in out and "→ sust" in out and "Δ: change against" in out  # "burst" folded above
    # rows name a source by its file; only the note under the table gives the whole path
    assert V1.name in out and out.count(str(V1.parent)) == 1
    assert main(["compare", "--format", "md", str(V1), str(V2)]) == 0
    md = capsys.readouterr().out.splitlines()
    assert md[2].startswith("| arm | source | decode tok/s |")


def test_the_markdown_is_titled_as_the_summary_s_is(capsys):
    """Issue 24: "`compare --format md` has no title": each session compared is named as
    `summary --format md` names it (source, tag, device, date), "vs" between them."""
    titles = []
    for source in (V1, V2):
        assert main(["summary", "--format", "md", str(source)]) == 0
        titles.append(capsys.readouterr().out.splitlines()[0].removeprefix("### "))
    assert main(["compare", "--format", "md", str(V1), str(V2)]) == 0
    title, blank, header, *_ = capsys.readouterr().out.splitlines()
    assert title == f"### {titles[0]} vs {titles[1]}" and " · sim · 20" in title
    assert blank == "" and header.startswith("| arm | source | decode tok/s |")
    assert main(["compare", "--format", "csv", str(V1), str(V2), str(AB)]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {(r["arm"], r["source"]) for r in rows} == {
        (arm, str(src)) for src in (V1, V2) for arm in ("minicpm5_1b_ane_pal8", GPU)
    } | {("minicpm5_2b_ane", str(AB)), ("minicpm5_2b_gpu_int8", str(AB))}


def test_sources_are_labelled_by_the_parts_that_tell_them_apart():
    assert compare.source_labels(["/lab/round1/a.jsonl", "/lab/round2/a.jsonl", "b.jsonl"]) == [
        "round1/a.jsonl",
        "round2/a.jsonl",
        "b.jsonl",
    ]
    assert compare.source_labels(["/x/a.jsonl", "/x/a.jsonl"]) == ["a.jsonl", "a.jsonl"]


def test_one_source_is_a_usage_error(capsys):
    assert main(["compare", str(V1)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "at least two SOURCEs" in err


def test_a_missing_or_bad_source_is_one_line(capsys, tmp_path):
    missing = tmp_path / "nope.jsonl"
    assert main(["compare", str(V1), str(missing)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(missing) in err


# the good SOURCE first: its stream, opened before the later one is refused, must be closed
# (pytest turns an unclosed file's ResourceWarning into a failure)
def test_a_source_without_bench_records_is_one_line(capsys, tmp_path):
    empty = tmp_path / "empty.log"
    empty.write_text("hello\n")
    assert main(["compare", str(V1), str(empty)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "no bench records" in err
    gc.collect()  # an unclosed stream would warn here, inside this test


def test_bad_by_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["compare", str(V1), str(V2), "--by", "model"])
    assert exit_info.value.code == 2


def test_the_median_row_carries_units_and_the_thermal_state(capsys):
    """The battery recording has J/token: its interval says J/token, as decode's says tok/s."""
    battery = str(RECORDINGS / "sim-battery-1b.jsonl")
    assert main(["compare", "--format", "md", battery, battery, battery]) == 0
    md = capsys.readouterr().out
    assert "| thermal | serious share |" in md.splitlines()[2]  # under the title
    assert "| 0.0643 [0.0643, 0.0643] J/token |" in md and "] tok/s |" in md
