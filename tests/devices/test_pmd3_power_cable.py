"""Energy with the cable in, end to end (issue 27): the same plan run on a virtual iPhone
plugged in and on its battery, with the real pymobiledevice3 client, `anemon run` and
the summary of its recording. Plugged in, J/token comes from the phone's system load and says
so; on its battery, from the battery's current x voltage; the two agree within 10 %. Without
the system load the plugged run withholds them, as before."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from anemon.analysis.load import load_sessions
from anemon.analysis.summary import ArmSummary, summarize
from anemon.cli import main
from anemon.devices.virtual import VirtualIPhone
from anemon.devices.virtual.ticker import advance
from anemon.events import TelemetryEvent
from anemon.simulator import SimConfig, SimulatedIPhone
from tests.devices.helpers import BUNDLE, PhoneThread
from tests.devices.test_virtual_several import OLD_IOS, plan_text
from tests.devices.test_virtual_several import UDID_A as UDID

SIM_SPEED = 100.0
"""Simulated seconds per real second: the 300 s arm is a few seconds of real time."""
REFRESH_S = 40.0
"""How often the virtual phone refreshes its system load (simulated seconds): 0.4 real
seconds, two of the host's reads."""
POWER_S = 0.2
"""How often the host reads the phone (real seconds): the load must be read through every span
with no gap over twice that (`LoadSteps.through`), so a stall of the test's process must
outlast 0.4 s to withhold the plugged run's figures (at 0.05 s, a 0.1 s stall once did)."""


def run_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, plugged: bool, system_load_s: float | None
) -> ArmSummary:
    """`anemon run` of a 300 s plan on a virtual iPhone; the summary of its one arm."""
    name = f"{'plugged' if plugged else 'battery'}-{system_load_s}"
    record, plan = tmp_path / f"{name}.jsonl", tmp_path / f"{name}.toml"
    plan.write_text(plan_text("cable", UDID, seconds=300, power_s=POWER_S))
    monkeypatch.setattr("pymobiledevice3.common._HOMEFOLDER", tmp_path / "pmd3-home")
    sim = SimulatedIPhone(SimConfig(seed=7, plugged=plugged, battery_percent=80.0))
    phone = VirtualIPhone(sim, bundles=[BUNDLE], udid=UDID, product_version=OLD_IOS,
                          system_load_s=system_load_s, developer_image=True)  # fmt: skip
    thread = PhoneThread(phone)
    with thread as running:
        monkeypatch.setenv("USBMUXD_SOCKET_ADDRESS", running.usbmux_address)
        thread.spawn(advance([sim], SIM_SPEED, tick_s=0.02))
        assert main(["run", str(plan), "--headless", "--record", str(record)]) == 0
    (loaded,) = load_sessions([record])
    _one_time_a_change(list(loaded.session.telemetry))
    (summary,) = summarize(loaded.session)
    return summary


def _one_time_a_change(readings: list[TelemetryEvent]) -> None:
    """Every reading of one system-load change says when it changed alike (`Pipeline.
    emit_reading`): readings whose three values are those of the reading before carry its
    time; each new value a later one."""
    loads = [r for r in readings if r.load_w is not None]
    for before, reading in itertools.pairwise(loads):
        same = (reading.load_w, reading.power_in_w, reading.battery_power_w) == (
            before.load_w, before.power_in_w, before.battery_power_w)  # fmt: skip
        assert before.load_changed_t is not None and reading.load_changed_t is not None
        if same:
            assert reading.load_changed_t == before.load_changed_t, (before, reading)
        else:
            assert reading.load_changed_t > before.load_changed_t, (before, reading)


def test_plugged_and_unplugged_runs_agree_on_j_per_token_from_the_system_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plugged = run_on(tmp_path, monkeypatch, plugged=True, system_load_s=REFRESH_S)
    battery = run_on(tmp_path, monkeypatch, plugged=False, system_load_s=REFRESH_S)
    assert plugged.energy_source == "system load" and battery.energy_source == "battery"
    assert plugged.energy_note is not None
    assert plugged.energy_note == "from the phone's system load (plugged in; refreshed every 0.4 s)"
    assert battery.energy_note is None
    # J/token before its rounding to four decimals: the session's seconds are real ones, so a
    # phone sped up 100 times spends 1/100 of its joules per token in them
    assert plugged.energy_j is not None and battery.energy_j is not None
    per_token = plugged.energy_j / plugged.tokens, battery.energy_j / battery.tokens
    assert per_token[0] == pytest.approx(per_token[1], rel=0.10)


def test_a_plugged_run_without_the_system_load_withholds_energy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = run_on(tmp_path, monkeypatch, plugged=True, system_load_s=None)
    assert (summary.j_per_token, summary.energy_note, summary.energy_source) == (
        None, "charging", None,
    )  # fmt: skip
