"""`anemon demo` and `anemon run` from the command line, headless, at max speed."""

from __future__ import annotations

from anemon.cli import main

HANG = """\
tag = "hang"
[protocol]
seconds = 60
[cooldown]
min_s = 30
until = "none"
cap_s = 30
[guards]
first_trial_timeout_s = 300
[[arms]]
name = "minicpm5_2b_ane_pal8"
[[arms]]
name = "qwen3_1_7b_ane"
"""


def test_demo_headless_at_max_speed_completes_and_records(tmp_path, capsys):
    record = tmp_path / "demo.jsonl"
    assert main(["demo", "--headless", "--speed", "max", "--record", str(record)]) == 0
    out, err = capsys.readouterr()
    assert f"recording to {record}" in err
    assert "minicpm5_1b_gpu_int8" in out and "2 of 2 launches completed" in out
    header = record.read_text().splitlines()[0]
    assert '"kind":"sim"' in header and '"until":"fair"' in header


def test_run_with_a_hang_exits_1_and_says_which_arm_and_why(tmp_path, capsys):
    plan = tmp_path / "hang.toml"
    plan.write_text(HANG)
    assert main(["run", str(plan), "--headless", "--speed", "max", "--no-record"]) == 1
    out, err = capsys.readouterr()
    assert "not recording" in err
    assert "not completed: minicpm5_2b_ane_pal8: failed: no first trial after 300 s" in out
    assert "qwen3_1_7b_ane" in out


def test_speed_is_for_the_simulator_only(tmp_path, capsys):
    plan = tmp_path / "p.toml"
    plan.write_text(HANG)
    assert main(["run", str(plan), "--device", "devicectl", "--speed", "2", "--headless"]) == 2
    assert "simulator only" in capsys.readouterr().err
