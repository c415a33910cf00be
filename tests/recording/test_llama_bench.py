"""llama-bench's results (-o json, jsonl, csv) as a SOURCE (docs/spec/llama-bench.md), on
files built from the shape its README documents."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from anemon.analysis.load import load_sessions
from anemon.analysis.summary import summarize
from anemon.cli import main
from anemon.recording.reader import open_source

PP = [6863.1, 7147.55, 7136.37, 7115.79, 7237.21]
TG = [119.03, 120.178, 119.43, 118.307, 117.464]


def bench_test(n_prompt: int, n_gen: int, samples: list[float], **fields: Any) -> dict:
    """One test as llama-bench's JSON printer writes it."""
    tokens = n_prompt + n_gen
    ns = [round(tokens / ts * 1e9) if ts > 0 else 0 for ts in samples]
    values = {
        "build_commit": "8cf427ff", "build_number": 5163, "cpu_info": "Apple M4 Max",
        "gpu_info": "Apple M4 Max", "backends": "Metal,BLAS",
        "model_filename": "models/Qwen2.5-7B-Instruct-Q4_K_M.gguf",
        "model_type": "qwen2 7B Q4_K - Medium", "model_size": 4677120000,
        "model_n_params": 7615616512, "n_batch": 2048, "n_ubatch": 512, "n_threads": 8,
        "type_k": "f16", "type_v": "f16", "n_gpu_layers": 99, "flash_attn": -1,
        "use_mmap": True, "n_prompt": n_prompt, "n_gen": n_gen, "n_depth": 0,
        "test_time": "2025-04-24T11:58:50Z", "avg_ns": round(sum(ns) / len(ns)),
        "stddev_ns": 1453752, "avg_ts": sum(samples) / len(samples), "stddev_ts": 1.04,
        "samples_ns": ns, "samples_ts": samples,
    }  # fmt: skip
    return values | fields


def summaries(path: Path):
    (loaded,) = load_sessions([path])
    return summarize(loaded.session), [f"{w.line}: {w.what}" for w in loaded.listed]


def test_json_gives_one_arm_per_test_its_repetitions_the_trials(tmp_path):
    path = tmp_path / "bench.json"
    path.write_text(json.dumps([bench_test(512, 0, PP), bench_test(0, 128, TG)], indent=2))
    reader = open_source(path)
    reader.close()
    assert reader.kind == "llama-bench"
    (pp, tg), warnings = summaries(path)
    assert warnings == []
    assert (pp.arm, tg.arm) == ("qwen2 7B Q4_K - Medium pp512", "qwen2 7B Q4_K - Medium tg128")
    assert pp.trials == 5 and pp.prefill_mean == pytest.approx(sum(PP) / 5)
    assert pp.decode_mean is None  # a pp test: prefill only
    assert tg.decode_mean == pytest.approx(sum(TG) / 5) and tg.prefill_mean is None
    assert (tg.decode_min, tg.decode_max, tg.tokens) == (min(TG), max(TG), 5 * 128)


def test_jsonl_reads_as_json(tmp_path):
    path = tmp_path / "bench.jsonl"
    path.write_text(json.dumps(bench_test(512, 0, PP)) + "\n" + json.dumps(bench_test(0, 128, TG)))
    (pp, tg), warnings = summaries(path)
    assert warnings == [] and (pp.trials, tg.trials) == (5, 5)


def test_csv_has_only_the_mean_one_trial_each(tmp_path):
    fields = [k for k in bench_test(1, 0, PP) if k not in ("samples_ns", "samples_ts")]
    rows = [bench_test(512, 0, PP), bench_test(0, 128, TG)]
    lines = [",".join(fields)] + [",".join(f'"{row[k]}"' for k in fields) for row in rows]
    path = tmp_path / "bench.csv"
    path.write_text("\n".join(lines) + "\n")
    (pp, tg), warnings = summaries(path)
    assert warnings == []
    assert (pp.trials, pp.prefill_mean) == (1, pytest.approx(sum(PP) / 5))
    assert (tg.trials, tg.decode_mean) == (1, pytest.approx(sum(TG) / 5))


def test_what_sets_tests_apart_names_their_arms(tmp_path):
    tests = [bench_test(0, 128, TG, n_threads=n) for n in (4, 8)]
    tests.append(bench_test(0, 128, TG, n_threads=8, backends="CPU", n_gpu_layers=0))
    path = tmp_path / "threads.json"
    path.write_text(json.dumps(tests))
    (loaded,) = load_sessions([path])
    arms = loaded.session.arms
    assert list(arms) == [
        "qwen2 7B Q4_K - Medium tg128 backends=Metal,BLAS n_threads=4 n_gpu_layers=99",
        "qwen2 7B Q4_K - Medium tg128 backends=Metal,BLAS n_threads=8 n_gpu_layers=99",
        "qwen2 7B Q4_K - Medium tg128 backends=CPU n_threads=8 n_gpu_layers=0",
    ]
    computes = [arm.start.compute for arm in arms.values() if arm.start is not None]
    assert computes == ["gpu", "gpu", "cpu"]


def test_unknown_fields_are_kept(tmp_path):
    path = tmp_path / "bench.jsonl"
    path.write_text(json.dumps(bench_test(0, 128, TG, moe_cache="auto", repack=True)) + "\n")
    (loaded,) = load_sessions([path])
    (arm,) = loaded.session.arms.values()
    assert arm.start is not None
    assert arm.start.extra["moe_cache"] == "auto" and arm.start.extra["repack"] == "true"
    assert arm.start.extra["cpu_info"] == "Apple M4 Max"
    assert (arm.start.p, arm.start.g, arm.start.n) == (0, 128, 5)


def test_bad_tests_are_counted_warnings_naming_their_line(tmp_path):
    good = bench_test(0, 128, TG)
    bad_rates = bench_test(512, 0, [7000.0, float("nan"), -3.0], samples_ns=None)
    text = json.dumps([good, 7, bad_rates], indent=1)
    path = tmp_path / "bench.json"
    path.write_text(text[: len(text) - 40])  # cut short inside the last test
    (tg, *rest), warnings = summaries(path)
    line_of_7 = text.splitlines().index(" 7,") + 1
    assert warnings[0] == f"{line_of_7}: an element of the array is not a JSON object: skipped"
    assert warnings[1].endswith("not JSON from here on (cut short or damaged): the rest is skipped")
    assert tg.trials == 5 and rest == []


def test_bad_rates_are_left_out_with_a_warning(tmp_path):
    bad = bench_test(512, 0, [7000.0, float("nan"), -3.0])
    path = tmp_path / "bench.jsonl"
    path.write_text(json.dumps(bad) + "\n")
    (pp,), warnings = summaries(path)
    assert warnings == ["1: samples_ts: 2 of 3 values are not a rate or a duration: left out"]
    assert pp.trials == 1 and pp.prefill_mean == 7000.0


def test_summary_gives_one_arm_per_test(tmp_path, capsys):
    path = tmp_path / "bench.json"
    path.write_text(json.dumps([bench_test(512, 0, PP), bench_test(0, 128, TG)], indent=2))
    assert main(["summary", "--format", "json", str(path)]) == 0
    arms = json.loads(capsys.readouterr().out)
    assert [a["arm"] for a in arms] == ["qwen2 7B Q4_K - Medium pp512",
                                        "qwen2 7B Q4_K - Medium tg128"]  # fmt: skip
