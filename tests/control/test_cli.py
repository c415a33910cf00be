"""`anemon demo` and `anemon run` from the command line, headless, at max speed."""

from __future__ import annotations

import re
import signal
import subprocess
import sys

import pytest

from anemon.cli import main
from tests.recorded import recorded, wait_for

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
    # said once under the table: its footnote (not again as "not completed: ...")
    under = out.rpartition("┘")[2]
    assert "minicpm5_2b_ane_pal8 failed: no first trial after 300 s" in " ".join(under.split())
    assert under.count("no first trial after 300 s") == 1 and "not completed" not in under
    assert "qwen3_1_7b_ane" in out


UNPLUGGED = """\
tag = "energy"
[device]
connect = "network"
[protocol]
seconds = 60
battery = "unplugged"
[[arms]]
name = "minicpm5_1b_ane_pal8"
"""


def test_the_simulator_unplugs_and_replugs_the_phone_itself_when_asked(tmp_path, capsys):
    """Nobody can pull a simulated cable: the simulator plays the operator, so the battery
    protocol ends on its own (it waited for a k nobody could press, at 600 s forced on)."""
    plan = tmp_path / "energy.toml"
    plan.write_text(UNPLUGGED)
    assert main(["run", str(plan), "--headless", "--speed", "max", "--no-record"]) == 0
    out, _ = capsys.readouterr()
    assert "unplug the phone now (battery protocol)" in out
    assert "marker: simulated operator: unplugs the phone in 5 s" in out
    assert "unplug wait: unplugged after 6 s" in out
    assert "marker: simulated operator: plugs the phone back in in 5 s" in out
    assert "replug wait: replugged after 6 s" in out
    assert "still charging" not in out and "1 of 1 launches completed" in out


def test_speed_is_for_the_simulator_only(tmp_path, capsys):
    plan = tmp_path / "p.toml"
    plan.write_text(HANG)
    assert main(["run", str(plan), "--device", "devicectl", "--speed", "2", "--headless"]) == 2
    assert "simulator only" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["run", "preflight"])
def test_a_phones_plan_on_the_simulator_is_checked_before_anything_starts(
    tmp_path, capsys, command
):
    """`--device sim` on a plan written for a phone: an arm with no simulator profile is a
    plan problem (exit 2, file, line and key), not a failure once the run has begun."""
    plan = tmp_path / "p.toml"
    plan.write_text('tag = "x"\n[device]\nkind = "devicectl"\n[[arms]]\nname = "mystery"\n')
    extra = ["--headless", "--no-record"] if command == "run" else []
    assert main([command, str(plan), "--device", "sim", *extra]) == 2
    assert re.search(r"p\.toml:\d+: arms\[0\]\.name: 'mystery' needs", capsys.readouterr().err)


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_aborts_the_demo_with_130_and_records_why(tmp_path, sig):
    record = tmp_path / "demo.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "anemon", "demo", "--headless", "--record", str(record)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert wait_for(lambda: recorded(record, "trial")), "no trial recorded"
    finally:
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert f"aborted by a signal ({sig.name})" in out
    # the abort's reason said once under the table (issue 24), besides the progress line
    progress, _, under = out.rpartition("┘")  # the table's last line
    why = "the operator aborted the session"
    assert f"minicpm5_1b_ane_pal8  phase aborted: minicpm5_1b_ane_pal8: aborted: {why}" in progress
    assert under.count(why) == 1 and f"minicpm5_1b_ane_pal8 aborted: {why}" in under
    assert "not run: minicpm5_1b_gpu_int8" in under
    assert f"abort session ({sig.name})" in [m["note"] for m in recorded(record, "marker")]
    assert "Traceback" not in err
