"""`anemon run` of a battery-protocol plan on the simulator, headless at `--speed max`, as a
user runs it (a subprocess): the simulator plays the operator, so the run ends on its own over
USB and over the network, with J/token for every arm (issue 21)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HANG_S = 120.0
"""A hang guard only (the run takes a few seconds); never a timing assertion."""
PLAN = """\
tag = "energy"
[device]
connect = "{connect}"
[protocol]
seconds = 60
battery = "unplugged"
[cooldown]
min_s = 10
cap_s = 60
[[arms]]
name = "minicpm5_1b_ane_pal8"
[[arms]]
name = "minicpm5_1b_gpu_int8"
"""


def anemon(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "anemon", *args], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=HANG_S)  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("connect", ["usb", "network"])
def test_a_battery_protocol_plan_on_the_simulator_ends_on_its_own_with_j_per_token(
    tmp_path, connect
):
    """It waited for a k nobody could press (USB) or a replug the simulator never made
    (network), the virtual clock running to 337,000 s: here that is the hang guard firing."""
    plan, record = tmp_path / "energy.toml", tmp_path / "energy.jsonl"
    plan.write_text(PLAN.format(connect=connect))
    ran = anemon("run", str(plan), "--headless", "--speed", "max", "--record", str(record))
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr
    assert "simulated operator: unplugs the phone in 5 s" in ran.stdout
    assert "2 of 2 launches completed" in ran.stdout and "Traceback" not in ran.stderr
    summary = anemon("summary", str(record), "--format", "json")
    assert summary.returncode == 0, summary.stderr
    arms = json.loads(summary.stdout)
    assert [a["arm"] for a in arms] == ["minicpm5_1b_ane_pal8", "minicpm5_1b_gpu_int8"]
    for arm in arms:
        assert isinstance(arm["j_per_token"], float) and arm["j_per_token"] > 0, arm
    # Virtual time did not run on: two 60 s arms, a cooldown and two waits of a few seconds.
    last = json.loads(record.read_text().splitlines()[-1])
    assert last["kind"] == "summary" and last["t"] < 300
