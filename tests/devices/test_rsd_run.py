"""A whole plan on an iOS 17 virtual iPhone: `anemon run PLAN --device pymobiledevice3` finds the
phone's RSD through the stand-in tunneld and launches and kills both arms over dtservicehub,
nothing stood in (the real client, the phone's DTX server, the simulated bench app)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from anemon.cli import main
from anemon.devices.pmd3 import dvt
from anemon.devices.virtual import VirtualIPhone
from anemon.devices.virtual.dvt import SERVICE_NAME as LOCKDOWN_DVT
from anemon.devices.virtual.rsd import DTSERVICEHUB, VirtualRsd
from anemon.devices.virtual.ticker import advance
from anemon.devices.virtual.tunneld import VirtualTunneld
from anemon.simulator import SimConfig, SimulatedIPhone
from tests.devices.helpers import BUNDLE, TIMEOUT_S, PhoneThread
from tests.devices.rsd_route import IOS
from tests.recorded import recorded

ARMS = ("minicpm5_1b_ane_pal8", "minicpm5_1b_gpu_int8")
SIM_SPEED = 40.0
"""Simulated seconds per real second: each arm's 30 s is under a second of real time."""


def plan_text(tag: str) -> str:
    arms = "".join(f'\n[[arms]]\nname = "{arm}"\n' for arm in ARMS)
    return f"""\
tag = "{tag}"

[device]
kind = "pymobiledevice3"
poll_s = 0.05
power_s = 0.1

[app]
bundle = "{BUNDLE}"

[protocol]
kind = "sustain"
seconds = 30

[cooldown]
min_s = 0
until = "none"
cap_s = 0

[guards]
first_trial_timeout_s = {TIMEOUT_S}
stall_timeout_s = {TIMEOUT_S}
{arms}"""


def test_a_two_arm_sustained_plan_runs_over_rsd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # the recording lands here
    monkeypatch.setattr("pymobiledevice3.common._HOMEFOLDER", tmp_path / "pmd3-home")
    sim = SimulatedIPhone(SimConfig())
    phone = VirtualIPhone(sim, bundles=[BUNDLE], product_version=IOS, developer_image=True)
    rsd = VirtualRsd(phone)
    thread = PhoneThread(phone)
    with thread, VirtualTunneld() as tunneld:
        thread.run(rsd.start())
        tunneld.add(rsd.tunnel(), rsd.up)
        monkeypatch.setenv(dvt.TUNNELD_ADDRESS, tunneld.address)
        monkeypatch.setenv("USBMUXD_SOCKET_ADDRESS", phone.usbmux_address)
        thread.spawn(advance([sim], SIM_SPEED, tick_s=0.02))
        plan = tmp_path / "plan.toml"
        plan.write_text(plan_text("rsd-run"))
        try:
            status = main(["run", str(plan), "--headless"])
        finally:
            thread.run(rsd.stop())
    out, err = capsys.readouterr()
    assert status == 0, err
    assert "rsd-run on pymobiledevice3" in out  # the summary table
    assert phone.service_starts[LOCKDOWN_DVT] == 0  # every launch and kill went over RSD
    assert phone.service_starts[DTSERVICEHUB] == 1  # one DVT connection for the run
    [note] = re.findall(r"recording to (\S+)$", err, re.MULTILINE)
    recording = Path(note)
    header = json.loads(recording.read_text().splitlines()[0])
    assert header["device"]["udid"] == phone.udid
    assert [e["arm"] for e in recorded(recording, "start")] == list(ARMS)
    assert [e["arm"] for e in recorded(recording, "end")] == list(ARMS)
    trials = recorded(recording, "trial")
    assert {t["arm"] for t in trials} == set(ARMS)
    log = "Documents/sustain/rsd-run.log"  # the plan's app.log, as the app wrote it
    written = sim.read_container_file(BUNDLE, log, 0, 1 << 24).decode()
    assert len(trials) == written.count("TRIAL ")  # every trial the app wrote, once
