"""Yardstick's results through every command that reads a SOURCE: summary, compare --by
compute, replay (and --overlay), export (SQLite too) and sessions."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing

import pytest

from anemon.cli import main
from anemon.recording.index import build_index
from tests.recording.test_yardstick import result, window, write


def gemma_runs(tmp_path):
    """The three Gemma 4 E2B runtimes: the GPUs sprint and fade, the ANE holds."""
    ane = result(rolling=window(burst=33.0, floor=22.0))
    mlx = result(runtime="mlx-swift", model_id="mlx-community/gemma-4-e2b-it-4bit",
                 display="Gemma 4 E2B (4-bit)", rolling=window(burst=48.0, floor=18.0),
                 stopReason="cancelled")  # fmt: skip
    litert = result(runtime="litert-lm", model_id="litert-community/gemma-4-E2B-it-litert-lm",
                    display="Gemma 4 E2B (.litertlm)", rolling=window(burst=56.0, floor=27.0),
                    initialThermalState="fair", stopReason="stop")  # fmt: skip
    return [write(tmp_path, run, name=f"{name}.jsonl")
            for name, run in (("ane", ane), ("mlx", mlx), ("litert", litert))]  # fmt: skip


def run_json(capsys, *argv: str):
    assert main(list(argv)) == 0
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return json.loads(out)


def test_summary_gives_the_sustained_figures_thermal_and_the_gauges_energy(tmp_path, capsys):
    (path, *_) = gemma_runs(tmp_path)
    (arm,) = run_json(capsys, "summary", "--format", "json", str(path))
    assert arm["burst_tps"] > 32 and arm["sustained_tps"] < 23 and arm["retained_pct"] < 70
    assert (arm["thermal_start"], arm["thermal_peak"], arm["thermal_end"]) == (
        "nominal", "serious", "serious")  # fmt: skip
    assert arm["j_per_token"] == 0.2072
    assert arm["energy_note"] == "from the 1 % battery gauge (±20 %)"
    assert main(["summary", str(path)]) == 0
    out = capsys.readouterr().out
    assert "0.2072 †" in out and "J/token from the 1 % battery gauge" in out


def test_compare_by_compute_the_ane_keeps_the_most(tmp_path, capsys):
    paths = gemma_runs(tmp_path)
    data = run_json(capsys, "compare", "--by", "compute", "--format", "json", *map(str, paths))
    retained = {
        (group["arm"], s["arm"]): s["retained_pct"]
        for group in data["arms"]
        for s in group["sessions"]
        if s is not None
    }
    best = max(retained, key=retained.__getitem__)
    assert best == ("ane", "coreml-llm/gemma4-e2b")
    assert {group for group, _ in retained} == {"ane", "gpu"}
    burst = {s["arm"]: s["burst_tps"] for g in data["arms"] for s in g["sessions"] if s}
    assert max(burst, key=burst.__getitem__) == "litert-lm/gemma-4-E2B-it-litert-lm"
    assert main(["compare", "--by", "compute", "--format", "md", *map(str, paths)]) == 0
    out = capsys.readouterr().out
    assert "0.2072 †" in out
    assert "† coreml-llm/gemma4-e2b: J/token from the 1 % battery gauge (±20 %)" in out


def test_a_headless_replay_plays_the_series_then_the_summary(tmp_path, capsys):
    path = write(tmp_path, result(rolling=[40.0, 0.0, 41.0]))
    assert main(["replay", str(path), "--headless", "--speed", "max"]) == 0
    out = capsys.readouterr().out
    assert "trial 0 " in out and "trial 2 " in out and "trial 1 " not in out  # 0: no sample
    assert "yardstick reported: 14,336 tokens" in out
    assert out.index("trial 2 ") < out.index("coreml-llm/gemma4-e2b │")


def test_a_published_run_is_the_overlay_under_your_own(tmp_path, capsys):
    mine, published = write(tmp_path, result(), name="mine.jsonl"), gemma_runs(tmp_path)[0]
    argv = ["replay", str(mine), "--headless", "--speed", "max", "--overlay", str(published)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.count("coreml-llm/gemma4-e2b") >= 2 and "Δ" in out


def test_export_sqlite_holds_every_sample(tmp_path):
    path, db = write(tmp_path, result(rolling=[40.0, 0.0, 41.0, 39.0])), tmp_path / "out.db"
    assert main(["export", str(path), "--format", "sqlite", "-o", str(db)]) == 0
    with closing(sqlite3.connect(db)) as conn:
        rows = conn.execute("SELECT decode_tps FROM trials ORDER BY t").fetchall()
    assert rows == [(40.0,), (41.0,), (39.0,)]


def test_sessions_lists_a_yardstick_file(tmp_path, capsys):
    gemma_runs(tmp_path)
    index = build_index(tmp_path)
    assert index.skipped == ()
    entries = {e.path.name: e for e in index.entries}
    mlx = entries["mlx.jsonl"]
    assert (mlx.kind, mlx.status, mlx.trials, mlx.os_build) == (
        "yardstick",
        "aborted",
        600,
        "26.4.2",
    )
    assert [(a.name, a.j_per_token) for a in mlx.arms] == [
        ("mlx-swift/gemma-4-e2b-it-4bit", 0.2072)
    ]
    assert main(["sessions", str(tmp_path), "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {e["kind"] for e in listed} == {"yardstick"}


async def test_the_dashboard_replay_draws_the_decode_curve(tmp_path):
    from anemon.feeds.runs import Runs
    from anemon.recording.reader import open_source
    from anemon.ui import layouts
    from anemon.ui.app import Dashboard
    from anemon.ui.charts.chart import Chart
    from anemon.ui.charts.specs import CHARTS
    from tests.ui.sample import replay_feed

    rolling = [40.0, 0.0, 41.0, 39.0, 38.5]
    events = list(open_source(write(tmp_path, result(rolling=rolling))))
    feed = replay_feed(events=events, markers_dir=tmp_path)
    app = Dashboard(Runs.one(feed), layouts.resolve("default"), save_dir=tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        app.redraw(force=True)
        await pilot.pause()
        assert app.query_one("#decode", Chart).display
        (line,) = CHARTS["decode"].lines(app.feed.session)
        assert line.label == "coreml-llm/gemma4-e2b"
        assert list(line.y) == [40.0, 41.0, 39.0, 38.5]
        assert list(line.x - line.x[0]) == pytest.approx([0.0, 2.0, 3.0, 4.0])  # its own second
