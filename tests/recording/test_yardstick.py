"""Yardstick's result JSONL as a SOURCE (docs/spec/yardstick.md), on files built here from the
documented shape (BenchmarkResult: device, model, runtime, task, timestamp, parameters,
metrics), never copies of the public files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from anemon.analysis.load import load_sessions, read_session
from anemon.analysis.summary import summarize
from anemon.analysis.sustained import sustained_figures
from anemon.errors import NoRecordsError
from anemon.events import EndEvent, LoadEvent, ReportEvent, StartEvent, TrialEvent
from anemon.recording.reader import open_source
from anemon.store import Session


def window(burst: float = 50.0, floor: float = 25.0, seconds: int = 600) -> list[float]:
    """A throttling curve: `burst` for a minute, then down to `floor` by 4 minutes."""
    out = []
    for k in range(seconds):
        fall = min(max((k - 60) / 180, 0.0), 1.0)
        out.append(burst - (burst - floor) * fall + (k % 3) * 0.1)
    return out


def result(
    runtime: str = "coreml-llm",
    model_id: str = "coreml-llm/gemma4-e2b",
    display: str = "Gemma 4 E2B (CoreML, ANE)",
    task: str = "energy",
    rolling: list[float] | None = None,
    **metrics: Any,
) -> dict[str, Any]:
    """One result line as BenchmarkResult encodes it."""
    values: dict[str, Any] = {
        "decodeRateRollingWindow": window() if rolling is None else rolling,
        "decodeTokensPerSecond": 30.0, "promptTokensPerSecond": 300.0, "promptTokenCount": 700,
        "generatedTokenCount": 14336, "firstTokenLatencyMS": 877, "loadTimeSeconds": 87.0,
        "memoryAfterLoadMB": 735.8, "coldRun": True, "stopReason": "length",
        "initialThermalState": "nominal", "peakThermalState": "serious",
        "finalThermalState": "serious", "energyJoules": 2970.0,
        "energyJoulesPerToken": 0.2072, "averagePackagePowerW": 4.91,
        "batteryDeltaPercent": 5.0, "energySource": "battery-1pct",
        "energyMeasurementWindowSeconds": 604.3, "interTokenLatencyP50MS": 34.4,
        "totalGenerationTimeSeconds": 604.5,
    }  # fmt: skip
    values.update(metrics)
    return {
        "device": {"modelIdentifier": "iPhone18,1", "systemVersion": "26.4.2",
                   "batteryLevel": 0.85, "batteryState": "unplugged",
                   "initialThermalState": "nominal", "isLowPowerModeEnabled": False},
        "id": "96756F1C-3FDA-4489-80E5-C094DDC93D25",
        "metrics": {k: v for k, v in values.items() if v is not None},
        "model": {"id": model_id, "displayName": display, "quantization": "INT4 palettized"},
        "outputSample": "## The Algorithmic Ascent",
        "parameters": {"maxTokens": 128, "temperature": 0.7, "topP": 0.9},
        "runtime": runtime, "task": task, "timestamp": "2026-06-04T03:24:05Z",
    }  # fmt: skip


def write(tmp_path: Path, *records: object, name: str = "run.jsonl", tail: str = "") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + tail)
    return path


def load(path: Path) -> tuple[Session, list[str]]:
    (loaded,) = load_sessions([path])
    return loaded.session, [f"{w.line}: {w.what}" for w in loaded.listed]


def one(path: Path):
    session, warnings = load(path)
    (summary,) = summarize(session)
    return summary, warnings


def test_a_yardstick_file_is_told_by_its_content(tmp_path):
    path = write(tmp_path, result(), name="results.log")  # the name says nothing
    reader = open_source(path)
    reader.close()
    assert reader.kind == "yardstick"


def test_each_window_sample_is_a_timed_decode_trial_at_its_own_time(tmp_path):
    rolling = window()
    summary, warnings = one(write(tmp_path, result(rolling=rolling)))
    assert warnings == []
    assert summary.arm == "coreml-llm/gemma4-e2b" and summary.trials == len(rolling)
    # the same rules as anemon's own trials: sample k at 5 + k s, el from the first
    import numpy as np

    el = np.arange(len(rolling), dtype=float)
    expected = sustained_figures(el, np.array(rolling), np.full(len(rolling), np.nan))
    assert summary.burst_tps == expected.burst_tps and summary.burst_tps > 49
    assert summary.sustained_tps == expected.sustained_tps and summary.sustained_tps < 26
    assert summary.retained_pct == expected.retained_pct
    assert (summary.fade_10_s, summary.fade_25_s) == (expected.fade_10_s, expected.fade_25_s)
    assert summary.fade_10_s is not None


def test_a_zero_in_the_window_is_no_sample_not_a_zero_rate(tmp_path):
    rolling = [0.0, 0.0, 40.0, 0.0, 42.0, 41.0]
    session, warnings = load(write(tmp_path, result(rolling=rolling)))
    arm = session.arms["coreml-llm/gemma4-e2b"]
    assert warnings == []
    assert list(arm.columns["decode_tps"]) == [40.0, 42.0, 41.0]
    assert list(arm.columns["trial"]) == [2.0, 4.0, 5.0]  # each keeps its own second
    app_t = list(arm.columns["app_t"])
    assert app_t == pytest.approx([0.877 + 5 + 2, 0.877 + 5 + 4, 0.877 + 5 + 5])
    (summary,) = summarize(session)
    assert summary.decode_min == 40.0


def test_thermal_start_peak_and_end_are_the_reported_ones(tmp_path):
    record = result(initialThermalState="fair", peakThermalState="critical",
                    finalThermalState="serious")  # fmt: skip
    summary, _ = one(write(tmp_path, record))
    assert (summary.thermal_start, summary.thermal_peak, summary.thermal_end) == (1, 3, 2)
    assert summary.serious_at_s is None  # Yardstick does not say when: never invented
    assert summary.to_json()["thermal_peak"] == "critical"


def test_the_energy_is_given_with_its_source_the_battery_gauge(tmp_path):
    summary, _ = one(write(tmp_path, result()))
    assert summary.j_per_token == 0.2072 and summary.energy_j == 2970.0
    assert summary.power_w_mean == 4.91 and summary.tokens == 14336
    assert summary.energy_note == "from the 1 % battery gauge (±20 %)"
    assert summary.tokens_per_battery_pct == pytest.approx(14336 / 5)


def test_a_run_without_a_battery_drop_has_no_energy(tmp_path):
    record = result(energyJoules=None, energyJoulesPerToken=None, averagePackagePowerW=None,
                    energySource=None, batteryDeltaPercent=0)  # fmt: skip
    summary, _ = one(write(tmp_path, record))
    assert summary.j_per_token is None and summary.energy_note == "no power samples"


@pytest.mark.parametrize(
    ("stop", "status", "reason"),
    [("length", "done", None), ("stop", "done", None),
     ("cancelled", "aborted", "the app ended: aborted"),
     ("error", "failed", "the app ended: error")],
)  # fmt: skip
def test_a_run_that_did_not_end_by_itself_stays_in_the_table_marked(tmp_path, stop, status, reason):
    path = write(tmp_path, result(stopReason=stop), result(runtime="mlx-swift", model_id="m"))
    first, second = summarize(load(path)[0])
    assert (first.status, first.status_reason) == (status, reason)
    assert first.trials == 600 and first.burst_tps is not None  # its figures are kept
    assert second.status == "done"


def test_missing_metrics_keys_leave_their_figures_out(tmp_path):
    bare = {"runtime": "mlx-swift", "model": {"id": "mlx-community/gemma-4-e2b-it-4bit"},
            "task": "energy", "metrics": {"decodeRateRollingWindow": [30.0, 31.0]}}  # fmt: skip
    summary, warnings = one(write(tmp_path, bare))
    assert warnings == []
    assert summary.arm == "mlx-swift/gemma-4-e2b-it-4bit" and summary.trials == 2
    assert summary.thermal_start is None and summary.j_per_token is None
    assert summary.status == "failed"  # no stopReason: how it ended is not known


def test_a_file_mixing_tasks_names_the_other_tasks_arms(tmp_path):
    chat = result(task="short-chat", rolling=[], decodeTokensPerSecond=31.5,
                  generatedTokenCount=256, totalGenerationTimeSeconds=9.0)  # fmt: skip
    session, _ = load(write(tmp_path, result(), chat, result()))
    energy, short = summarize(session)
    assert energy.arm == "coreml-llm/gemma4-e2b" and len(energy.rounds) == 2  # run twice
    assert short.arm == "coreml-llm/gemma4-e2b (short-chat)"
    assert (short.trials, short.decode_mean, short.tokens) == (1, 31.5, 256)


def test_unknown_keys_are_kept_as_text(tmp_path):
    record = result(aneResidencyPct=97.5)
    record["newTopLevel"] = {"a": 1}
    session, _ = load(write(tmp_path, record))
    start = session.arms["coreml-llm/gemma4-e2b"].start
    assert start is not None
    assert start.extra["metrics.aneResidencyPct"] == "97.5"
    assert start.extra["metrics.interTokenLatencyP50MS"] == "34.4"
    assert start.extra["device.modelIdentifier"] == "iPhone18,1"
    assert start.extra["newTopLevel.a"] == "1"
    assert (start.model, start.compute, start.os) == ("coreml-llm/gemma4-e2b", "ane", "26.4.2")


@pytest.mark.parametrize(
    ("runtime", "model_id", "display", "compute"),
    [("coreml-llm", "coreml-llm/qwen3-0.6b", "Qwen3-0.6B (CoreML, ANE)", "ane"),
     ("mlx-swift", "mlx-community/Qwen3-0.6B-4bit", "Qwen3-0.6B (4-bit)", "gpu"),
     ("litert-lm", "litert-community/gemma-4-E2B-it-litert-lm", "Gemma 4 E2B", "gpu"),
     ("core-ai", "core-ai/qwen3-0.6b-gpu", "Qwen3-0.6B (Core AI, GPU)", "gpu"),
     ("executorch", "x/y", "Y", None)],
)  # fmt: skip
def test_the_compute_comes_from_the_runtime_unless_the_model_names_it(
    tmp_path, runtime, model_id, display, compute
):
    session, _ = load(write(tmp_path, result(runtime=runtime, model_id=model_id, display=display)))
    (arm,) = session.arms.values()
    assert arm.start is not None and arm.start.compute == compute


def test_a_torn_last_line_is_a_warning_naming_it(tmp_path):
    path = write(tmp_path, result(), tail=json.dumps(result(runtime="mlx-swift"))[:500])
    session, warnings = load(path)
    assert list(session.arms) == ["coreml-llm/gemma4-e2b"]
    assert warnings == ["2: the file stops inside this line (a torn last line): skipped"]


def test_bad_lines_are_counted_warnings_naming_them(tmp_path):
    lines = [
        json.dumps(result()),
        "[1, 2, 3]",
        json.dumps(result(runtime="mlx-swift") | {"metrics": [1, 2]}),
        json.dumps(result(runtime="litert-lm", rolling=[30.0, float("nan"), -1.0, 1e999, "x"])),
        json.dumps(result(runtime="anemll", loadTimeSeconds="slow", initialThermalState="hot")),
    ]
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    session, warnings = load(path)
    assert warnings == [
        "2: not a JSON object: the line is skipped",
        "3: metrics is a list, not an object: the line is skipped",
        "4: decodeRateRollingWindow: 4 of 5 samples not a rate (NaN, infinite, negative or "
        "over 1e9): left out",
        "5: loadTimeSeconds: text is not a number: left out",
        "5: initialThermalState: 'hot' is not a thermal state: left out",
    ]
    assert list(session.arms) == ["coreml-llm/gemma4-e2b", "litert-lm/gemma4-e2b",
                                  "anemll/gemma4-e2b"]  # fmt: skip
    assert list(session.arms["litert-lm/gemma4-e2b"].columns["decode_tps"]) == [30.0]


def test_a_50_mb_line_is_a_warning_not_a_traceback(tmp_path):
    path = tmp_path / "huge.jsonl"
    with path.open("w") as out:
        out.write(json.dumps(result()) + "\n")
        out.write('{"metrics": {"decodeRateRollingWindow": [' + "1.0," * (12 << 20) + "1.0]}}\n")
        out.write(json.dumps(result(runtime="mlx-swift")) + "\n")
    session, warnings = load(path)
    assert len(session.arms) == 2
    assert len(warnings) == 1 and warnings[0].startswith("2: a line of ")
    assert warnings[0].endswith("bytes, longer than this format reads: skipped")


def test_a_huge_window_is_read_whole(tmp_path):
    rolling = window(seconds=100_000)
    summary, warnings = one(write(tmp_path, result(rolling=rolling)))
    assert warnings == [] and summary.trials == 100_000
    assert summary.sustained_tps is not None and summary.sustained_tps < 26


def test_events_and_columns_give_the_same_session(tmp_path):
    # replay iterates events; summary reads a run's trials as columns: one reading
    path = write(tmp_path, result(rolling=[0.0, 40.0, 41.0, 0.0, 39.0]), result(stopReason="error"))
    replayed = Session.from_events(open_source(path))
    read, _ = read_session(open_source(path))
    assert [s.to_json() for s in summarize(replayed)] == [s.to_json() for s in summarize(read)]
    kinds = [type(e) for e in open_source(path)]
    assert kinds[:2] == [StartEvent, LoadEvent]
    assert kinds.count(TrialEvent) == 3 + 600 and kinds.count(ReportEvent) == 2
    assert kinds.count(EndEvent) == 2


def test_a_json_file_of_another_shape_says_what_was_looked_for(tmp_path):
    path = write(tmp_path, {"model": "x", "decode_tps": 3})
    with pytest.raises(NoRecordsError, match=r"Yardstick result JSONL.*llama-bench"):
        load(path)


def test_a_gzip_file_is_told_by_its_decompressed_content(tmp_path):
    import gzip

    path = tmp_path / "run.jsonl.gz"
    path.write_bytes(gzip.compress((json.dumps(result()) + "\n").encode()))
    summary, warnings = one(path)
    assert warnings == [] and summary.trials == 600 and summary.j_per_token == 0.2072
