"""`anemon replay SOURCE --headless`: played through to the summary; a signal stops it (130)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from anemon.cli import main

SAMPLE = Path(__file__).parents[2] / "recordings" / "sim-sustain-1b-v2.jsonl"


def test_a_headless_replay_at_max_prints_progress_then_the_summary(capsys):
    assert main(["replay", str(SAMPLE), "--headless", "--speed", "max"]) == 0
    out = capsys.readouterr().out
    assert "launched" in out and "trial 1 " in out
    assert out.index("trial 1 ") < out.index("minicpm5_1b_ane_pal8 │")  # the table comes last


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_a_headless_replay_with_130(sig):
    proc = subprocess.Popen(
        [sys.executable, "-m", "anemon", "replay", str(SAMPLE), "--headless", "--speed", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        first = proc.stdout.readline()  # playing: the first event's line
    finally:
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
    assert first.strip()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert "┏" not in out  # stopped: no summary


V1 = SAMPLE.with_name("sim-sustain-1b-v1.jsonl")


def test_a_headless_replay_with_an_overlay_ends_with_the_changes_against_it(capsys):
    assert main(["replay", str(SAMPLE), "--overlay", str(V1), "--headless", "--speed", "max"]) == 0
    out = capsys.readouterr().out
    deltas = out[out.index("Δ decode") :]  # after the summary: the table against the reference
    assert out.index("minicpm5_1b_ane_pal8 │") < out.index("Δ decode")
    # v1's GPU arm decodes 34.6 tok/s on average, v2's 35.3 (README "Comparing sessions")
    gpu = [line for line in deltas.splitlines() if "minicpm5_1b_gpu_int8" in line]
    assert len(gpu) == 2 and "+1.9 %" in gpu[1] and "sim-sustain-1b-v2" in gpu[1]
    assert f"Δ: change against {V1}" in " ".join(deltas.split())


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda d: d / "missing.jsonl", "no such file"),
        (lambda d: _write(d / "blob.bin", bytes(range(256)) * 8), "binary"),
        (lambda d: _write(d / "notes.txt", b"just some notes\nno bench lines here\n"),
         "no bench records"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("headless", [True, False])
def test_a_bad_overlay_is_one_line_and_exit_2_before_anything_plays(
    tmp_path, capsys, make, said, headless
):
    other = make(tmp_path)
    argv = ["replay", str(SAMPLE), "--overlay", str(other), "--speed", "max"]
    # without --headless the dashboard would start: it must not get that far
    assert main([*argv, "--headless"] if headless else argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # nothing played
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("anemon: --overlay: ")
    assert said in lines[0] and str(other) in lines[0]
    assert "Traceback" not in captured.err


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path
