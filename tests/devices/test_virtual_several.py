"""Two virtual iPhones behind one usbmuxd: the pymobiledevice3 backend reaches each by its UDID,
and `anemon run A.toml B.toml` runs a plan on each at once, end to end (issue 12, part 1)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from anemon.cli import main
from anemon.devices.base import DeviceError
from anemon.devices.pmd3 import Pmd3Device
from anemon.devices.virtual import VirtualIPhone, VirtualUsbmuxd
from anemon.devices.virtual.__main__ import udids
from anemon.devices.virtual.ticker import advance
from anemon.simulator import SimConfig, SimulatedIPhone
from tests.devices.helpers import BUNDLE, TIMEOUT_S, PhoneThread, StandInPhone
from tests.recorded import recorded

UDID_A = "00008120-000A11CE5EED0001"
UDID_B = "00008120-000A11CE5EED0002"
ARM = "minicpm5_1b_ane_pal8"
SIM_SPEED = 40.0
"""Simulated seconds per real second: a 30 s protocol is under a second of real time."""
OLD_IOS = "16.7.10"
"""Before iOS 17 DVT runs over lockdown (the virtual iPhone serves it): no RSD tunnel."""


def plan_text(tag: str, udid: str, *, seconds: int = 30, power_s: float = 0.1) -> str:
    return f"""\
tag = "{tag}"

[device]
kind = "pymobiledevice3"
id = "{udid}"
poll_s = 0.05
power_s = {power_s}

[app]
bundle = "{BUNDLE}"

[protocol]
seconds = {seconds}

[cooldown]
min_s = 0
until = "none"
cap_s = 0

[guards]
first_trial_timeout_s = {TIMEOUT_S}
stall_timeout_s = {TIMEOUT_S}

[[arms]]
name = "{ARM}"
"""


@pytest.fixture
def two_stand_ins(monkeypatch: pytest.MonkeyPatch) -> Iterator[PhoneThread[VirtualUsbmuxd]]:
    """Two virtual iPhones (stand-in phones) behind one usbmuxd, in a thread."""
    phones = [
        VirtualIPhone(StandInPhone(), bundles=[BUNDLE], udid=udid, name=f"Phone {udid[-1]}")
        for udid in (UDID_A, UDID_B)
    ]
    thread = PhoneThread(VirtualUsbmuxd(phones))
    with thread as usbmuxd:
        monkeypatch.setenv("USBMUXD_SOCKET_ADDRESS", usbmuxd.usbmux_address)
        yield thread


def test_distinct_udids_are_required() -> None:
    phones = [VirtualIPhone(StandInPhone(), udid=UDID_A) for _ in range(2)]
    with pytest.raises(ValueError, match="distinct UDIDs"):
        VirtualUsbmuxd(phones)


def test_the_command_line_numbers_phones_or_takes_udids() -> None:
    assert udids(0, []) == [UDID_A]
    assert udids(2, []) == [UDID_A, UDID_B]
    assert udids(0, ["X", "Y"]) == ["X", "Y"]
    for count, given in ((2, ["X"]), (0, ["X", "x"]), (-1, []), (65, [])):
        with pytest.raises(ValueError):
            udids(count, given)


def test_the_backend_reaches_each_phone_by_udid(
    two_stand_ins: PhoneThread[VirtualUsbmuxd], tmp_path: Path
) -> None:
    async def connect(udid: str) -> tuple[str, str]:
        device = Pmd3Device(udid, pairing_records_cache_folder=tmp_path / "pair")
        try:
            info = await device.connect()
        finally:
            await device.close()
        return info.udid, info.name

    async def both() -> list[tuple[str, str] | BaseException]:
        async with asyncio.timeout(TIMEOUT_S):
            return await asyncio.gather(connect(UDID_A), connect(UDID_B), return_exceptions=True)

    assert asyncio.run(both()) == [(UDID_A, "Phone 1"), (UDID_B, "Phone 2")]

    async def unplug_a() -> None:
        two_stand_ins.phone.phones[0].detach()

    two_stand_ins.run(unplug_a())
    gone, still_there = asyncio.run(both())
    assert isinstance(gone, DeviceError)  # A is no longer listed
    assert still_there == (UDID_B, "Phone 2")


def test_two_plans_run_on_two_virtual_iphones_at_once(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)  # the recordings land here
    monkeypatch.setattr("pymobiledevice3.common._HOMEFOLDER", tmp_path / "pmd3-home")
    sims = {udid: SimulatedIPhone(SimConfig(seed=n)) for n, udid in enumerate((UDID_A, UDID_B))}
    phones = [
        VirtualIPhone(
            sim, bundles=[BUNDLE], udid=udid, product_version=OLD_IOS, developer_image=True
        )
        for udid, sim in sims.items()
    ]
    thread = PhoneThread(VirtualUsbmuxd(phones))
    with thread as usbmuxd:
        monkeypatch.setenv("USBMUXD_SOCKET_ADDRESS", usbmuxd.usbmux_address)
        thread.spawn(advance(list(sims.values()), SIM_SPEED, tick_s=0.02))
        a = tmp_path / "a.toml"
        b = tmp_path / "b.toml"
        a.write_text(plan_text("lab-a", UDID_A))
        b.write_text(plan_text("lab-b", UDID_B))
        status = main(["run", str(a), str(b), "--headless"])
    out, err = capsys.readouterr()
    assert status == 0, err
    # each phone ran its own plan's arm once, launched over its own DVT connection
    dvt = "com.apple.instruments.remoteserver.DVTSecureSocketProxy"
    assert [phone.service_starts[dvt] for phone in phones] == [1, 1]
    notes = dict(re.findall(r"^(\S+): recording to (\S+)$", err, re.MULTILINE))
    assert set(notes) == {UDID_A, UDID_B}
    for udid, tag in ((UDID_A, "lab-a"), (UDID_B, "lab-b")):
        recording = Path(notes[udid])
        assert tag in recording.name
        header = json.loads(recording.read_text().splitlines()[0])
        assert header["device"]["udid"] == udid
        trials = [e["trial"] for e in recorded(recording, "trial")]
        log = f"Documents/sustain/{tag}.log"  # the plan's app.log
        written = sims[udid].read_container_file(BUNDLE, log, 0, 1 << 24).decode()
        assert written.count("START ") == 1 and f"arm={ARM}" in written
        assert trials and trials == sorted(trials)
        assert len(trials) == written.count("TRIAL ")  # every trial the app wrote, once
        assert recorded(recording, "end")
        assert f"[{udid}]" in out
