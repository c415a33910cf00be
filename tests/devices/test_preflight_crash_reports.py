"""`anemon preflight PLAN --device pymobiledevice3` against the virtual iPhone, on both routes:
a JetsamEvent naming the app (by its executable: no pid of it is known before a run) written
after the last recording of the tag makes the `crash reports` check warn (exit status 0, as
for every warning); one written before it passes."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from anemon.cli import main
from anemon.devices.pmd3 import dvt
from anemon.devices.virtual import VirtualIPhone
from anemon.devices.virtual.rsd import VirtualRsd
from anemon.devices.virtual.tunneld import VirtualTunneld
from anemon.recording.writer import DEFAULT_DIR, Recorder, make_header
from anemon.simulator import SimConfig, SimulatedIPhone
from tests.devices.dvt.helpers import VERSIONS, plan_text
from tests.devices.dvt.test_crash_reports import T0, jetsam
from tests.devices.helpers import BUNDLE, PhoneThread

TAG = "crashpre"


@contextlib.contextmanager
def phone_on(route: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[PhoneThread[VirtualIPhone]]:
    """A virtual iPhone with DVT in a thread of its own (the command runs its own loop), reached
    over lockdown (iOS 16) or through the stand-in tunneld and its RSD (iOS 17)."""
    sim = SimulatedIPhone(SimConfig())
    phone = VirtualIPhone(sim, bundles=[BUNDLE], product_version=VERSIONS[route],
                          developer_image=True)  # fmt: skip
    thread = PhoneThread(phone)
    with thread, VirtualTunneld() as tunneld:
        monkeypatch.setenv("USBMUXD_SOCKET_ADDRESS", phone.usbmux_address)
        rsd = VirtualRsd(phone)
        if route == "rsd":
            thread.run(rsd.start())
            tunneld.add(rsd.tunnel(), rsd.up)
            monkeypatch.setenv(dvt.TUNNELD_ADDRESS, tunneld.address)
        try:
            yield thread
        finally:
            thread.run(rsd.stop())


def last_session(folder: Path, ended: float) -> Path:
    """A recording of the tag, last written at `ended`."""
    path = folder / DEFAULT_DIR / f"{TAG}-20261117-100000.jsonl"
    path.parent.mkdir(parents=True)
    device = {"name": "Virtual iPhone", "os": "16.7.10"}
    Recorder(path, make_header("plan", device, {"tag": TAG})).close()
    os.utime(path, (ended, ended))
    return path


def preflight(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text(TAG))
    status = main(["preflight", str(plan), "--device", "pymobiledevice3"])
    return status, " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("route", ["lockdown", "rsd"])
@pytest.mark.parametrize("written", [T0 + 60, T0 - 60], ids=["after", "before"])
def test_a_jetsam_since_the_last_session_warns(
    route: str,
    written: float,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)  # where the last session is looked for
    monkeypatch.setattr("anemon.headless.PIPE_WIDTH", 400)  # each row of the table on one line
    monkeypatch.setattr("pymobiledevice3.common._HOMEFOLDER", tmp_path / "pmd3-home")
    last = last_session(tmp_path, T0)
    with phone_on(route, monkeypatch) as thread:
        report = thread.run(_written(thread.phone, written))
        status, out = preflight(tmp_path, capsys)
    assert status == 0  # a warning, not a failure
    if written > T0:
        assert f"1 report for the app since {last.name}, newest {report}" in out
        assert "crash reports: the app crashed or was killed since the last session" in out
    else:
        assert f"none for the app since {last.name}" in out
        assert "crash reports:" not in out  # not among the summary's warnings


async def _written(phone: VirtualIPhone, wall_s: float) -> str:
    return jetsam(phone.sim, wall_s)  # type: ignore[arg-type]
