"""The devicectl backend against a fake `xcrun` on PATH (tests/devices/fake_xcrun)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import plistlib
from collections import deque
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from anemon.devices.base import DeviceError, DeviceGone, LaunchRefused
from anemon.devices.devicectl import DevicectlDevice
from anemon.devices.devicectl.errors import XCRUN_MISSING
from anemon.sources.items import LogGap, LogItem, LogReset
from tests.devices.fake_xcrun import FakeXcrun
from tests.devices.fake_xcrun.devicectl import PHONE
from tests.devices.helpers import BUNDLE

LOG = "Documents/sustain/t1.log"
TIMEOUT_S = 30.0  # an overall bound for each wait; never a timing assertion
ENV = {"AB_MODEL": "arm_a", "AB_TAG": "t1", "AB_MODE": "ab", "AB_TRIALS": "4"}


@pytest.fixture
async def device(fake_xcrun: FakeXcrun) -> AsyncIterator[DevicectlDevice]:
    backend = DevicectlDevice(poll_s=0.02)
    yield backend
    await backend.close()


class Items:
    """The items of a follow, taken up to a condition; the rest of a batch is kept."""

    def __init__(self, batches: AsyncIterator[list[LogItem]]) -> None:
        self._batches = batches
        self._pending: deque[LogItem] = deque()

    async def until(self, condition: Callable[[LogItem], bool]) -> list[LogItem]:
        """Items up to and including the first that satisfies `condition`."""
        found: list[LogItem] = []
        async with asyncio.timeout(TIMEOUT_S):
            while True:
                while self._pending:
                    found.append(item := self._pending.popleft())
                    if condition(item):
                        return found
                self._pending.extend(await anext(self._batches))


def is_end(item: LogItem) -> bool:
    return isinstance(item, str) and item.startswith("END ")


async def wait_until(condition: Callable[[], bool]) -> None:
    async with asyncio.timeout(TIMEOUT_S):
        while not condition():
            await asyncio.sleep(0.01)


# -- connect -----------------------------------------------------------------------------


@pytest.mark.parametrize("version", [None, 5])
async def test_connect_finds_the_physical_phone(
    fake_xcrun: FakeXcrun, monkeypatch: pytest.MonkeyPatch, version: int | None
) -> None:
    for name, value in fake_xcrun.environ(json_version=version).items():
        monkeypatch.setenv(name, value)
    backend = DevicectlDevice()
    info = await backend.connect()
    await backend.close()
    assert (info.kind, info.udid, info.name) == ("devicectl", PHONE["udid"], PHONE["name"])
    assert (info.os, info.model) == ("18.2", "iPhone 15 Pro")


async def test_json_version_5_without_deprecated_fields(
    fake_xcrun: FakeXcrun, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_XCRUN_JSON_VERSION", "5")
    fake_xcrun.configure(devices=[{**PHONE, "omit_deprecated": True}])
    backend = DevicectlDevice()
    (phone,) = await backend.list_devices()
    await backend.close()
    assert (phone.udid, phone.name, phone.os_version) == (PHONE["udid"], PHONE["name"], "18.2")


SPARE = {**PHONE, "identifier": "X-2", "udid": "00008130-0000000000000002", "name": "Spare"}


async def test_connect_by_name_among_several(fake_xcrun: FakeXcrun) -> None:
    fake_xcrun.configure(devices=[PHONE, SPARE])
    backend = DevicectlDevice("spare")
    info = await backend.connect()
    await backend.close()
    assert info.udid == SPARE["udid"]


@pytest.mark.parametrize(
    ("wanted", "devices", "message"),
    [
        ("", [PHONE, SPARE], "several iPhones attached"),
        ("Nope", [PHONE, SPARE], "no attached iPhone named 'Nope'"),
        ("", [], "no iPhone attached"),
    ],
    ids=["ambiguous", "unknown-name", "none-attached"],
)
async def test_connect_without_one_matching_phone_says_why(
    fake_xcrun: FakeXcrun, wanted: str, devices: list[dict[str, str]], message: str
) -> None:
    fake_xcrun.configure(devices=devices)
    backend = DevicectlDevice(wanted)
    with pytest.raises(DeviceError, match=message):
        await backend.connect()
    await backend.close()


async def test_xcrun_missing_is_one_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory: no xcrun anywhere
    with pytest.raises(DeviceError) as raised:
        await DevicectlDevice().connect()
    assert str(raised.value) == XCRUN_MISSING
    assert not raised.value.transient


# -- install and launch --------------------------------------------------------------------


async def test_install_tolerates_progress_and_reads_the_bundle(
    device: DevicectlDevice, fake_xcrun: FakeXcrun, tmp_path: Path
) -> None:
    app = tmp_path / "Bench.app"
    app.mkdir()
    (app / "Info.plist").write_bytes(plistlib.dumps({"CFBundleIdentifier": "com.example.other"}))
    await device.install(app)
    assert device.installed == ["com.example.other"]
    assert "com.example.other" in fake_xcrun.config()["installed"]
    (call,) = fake_xcrun.calls_of("device", "install", "app")
    assert call[-1] == str(app)


async def test_install_failure(device: DevicectlDevice, tmp_path: Path) -> None:
    with pytest.raises(DeviceError, match="install failed") as raised:
        await device.install(tmp_path / "Missing.app")
    assert not raised.value.transient


async def test_launch_passes_env_as_json_with_every_option_before_the_bundle(
    device: DevicectlDevice, fake_xcrun: FakeXcrun
) -> None:
    env = {**ENV, "AB_NOTE": 'quotes " and spaces'}
    pid = await device.launch(BUNDLE, env)
    assert pid in fake_xcrun.running()
    (call,) = fake_xcrun.calls_of("device", "process", "launch")
    assert call[-1] == BUNDLE  # nothing after it: it would reach the app as its arguments
    assert "--console" not in call
    assert "--terminate-existing" in call
    options = call[: call.index(BUNDLE)]
    assert options[options.index("--device") + 1] == PHONE["identifier"]
    assert json.loads(options[options.index("--environment-variables") + 1]) == env
    await device.terminate(pid)


@pytest.mark.parametrize(
    ("reason", "transient", "advice"),
    [
        ("Busy", True, "busy"),
        ("none", True, "no reason"),
        ("Locked", False, "unlock the phone"),
        ("Security", False, "VPN & Device Management"),
        ("NotFound", False, "install the app"),
    ],
)
async def test_refused_launches_are_typed(
    device: DevicectlDevice, fake_xcrun: FakeXcrun, reason: str, transient: bool, advice: str
) -> None:
    fake_xcrun.configure(refusals=[reason])
    with pytest.raises(LaunchRefused) as raised:
        await device.launch(BUNDLE, ENV)
    assert raised.value.transient is transient
    assert raised.value.code == 10002
    assert advice in str(raised.value)
    assert fake_xcrun.config()["refusals"] == []  # consumed: the next launch works
    pid = await device.launch(BUNDLE, ENV)
    await device.terminate(pid)


async def test_a_refusal_right_after_an_install_says_so(
    device: DevicectlDevice, fake_xcrun: FakeXcrun, tmp_path: Path
) -> None:
    app = tmp_path / "Bench.app"
    app.mkdir()
    await device.install(app)
    fake_xcrun.configure(refusals=["none"])
    with pytest.raises(LaunchRefused, match="right after an install") as raised:
        await device.launch(BUNDLE, ENV)
    assert raised.value.transient


async def test_launching_an_app_that_is_not_installed(
    device: DevicectlDevice, fake_xcrun: FakeXcrun
) -> None:
    fake_xcrun.configure(installed=[])
    with pytest.raises(LaunchRefused, match="install the app") as raised:
        await device.launch(BUNDLE, ENV)
    assert not raised.value.transient


async def test_connection_invalidated_is_device_gone(
    device: DevicectlDevice, fake_xcrun: FakeXcrun
) -> None:
    await device.connect()
    fake_xcrun.configure(gone="invalidated")
    with pytest.raises(DeviceGone, match="Connection was invalidated") as raised:
        await device.launch(BUNDLE, ENV)
    assert raised.value.transient


async def test_developer_disk_image_error(device: DevicectlDevice, fake_xcrun: FakeXcrun) -> None:
    fake_xcrun.configure(fail={"device info lockState": "ddi"})
    with pytest.raises(DeviceError, match="developer disk image") as raised:
        await device.lock_state()
    assert raised.value.code == 12040 and not raised.value.transient


async def test_a_hung_call_times_out_as_transient(fake_xcrun: FakeXcrun) -> None:
    fake_xcrun.configure(sleep={"device info lockState": 60})
    backend = DevicectlDevice(PHONE["udid"], call_timeout_s=0.5)
    with pytest.raises(DeviceError, match=r"did not finish within 0\.5 s") as raised:
        await backend.lock_state()
    assert raised.value.transient
    await backend.close()


# -- terminate, processes, lock state ------------------------------------------------------


async def test_terminate_kills_the_app(device: DevicectlDevice, fake_xcrun: FakeXcrun) -> None:
    fake_xcrun.configure(trial_s=5.0)  # would run for half a minute
    pid = await device.launch(BUNDLE, ENV)
    assert pid in {process.pid for process in await device.processes()}
    await device.terminate(pid)
    assert pid not in fake_xcrun.running()
    assert pid not in {process.pid for process in await device.processes()}
    (call,) = fake_xcrun.calls_of("device", "process", "terminate")
    assert call[call.index("--pid") + 1] == str(pid)


async def test_terminating_an_app_that_already_exited_is_fine(
    device: DevicectlDevice, fake_xcrun: FakeXcrun
) -> None:
    pid = await device.launch(BUNDLE, {**ENV, "AB_TRIALS": "1"})
    await wait_until(lambda: pid not in fake_xcrun.running())
    await device.terminate(pid)


async def test_lock_state(device: DevicectlDevice, fake_xcrun: FakeXcrun) -> None:
    fake_xcrun.configure(locked=True)
    state = await device.lock_state()
    assert state.passcode_required is True and state.unlocked_since_boot is True


async def test_app_installed_asks_device_info_apps(device: DevicectlDevice) -> None:
    assert await device.app_installed("com.example.bench") is True
    assert await device.app_installed("com.example.other") is False


async def test_no_telemetry(device: DevicectlDevice) -> None:
    assert await device.telemetry() is None


# -- copy and follow -----------------------------------------------------------------------


async def test_copy_from_goes_through_a_fresh_temp_file_then_a_rename(
    device: DevicectlDevice, fake_xcrun: FakeXcrun, tmp_path: Path
) -> None:
    source = fake_xcrun.container_file(BUNDLE, LOG)
    source.parent.mkdir(parents=True)
    source.write_text("START arm=a\n")
    mirror = tmp_path / "mirror" / "t1.log"
    await device.copy_from(BUNDLE, LOG, mirror)
    source.write_text("START arm=a\nLOAD arm=a\n")
    await device.copy_from(BUNDLE, LOG, mirror)  # the fake refuses existing destinations
    assert mirror.read_text() == "START arm=a\nLOAD arm=a\n"
    assert sorted(p.name for p in mirror.parent.iterdir()) == ["t1.log"]  # no leftovers
    destinations = [
        Path(call[call.index("--destination") + 1])
        for call in fake_xcrun.calls_of("device", "copy", "from")
    ]
    assert len(set(destinations)) == 2
    assert all(d.parent == mirror.parent and d != mirror for d in destinations)
    (call, _) = fake_xcrun.calls_of("device", "copy", "from")
    assert call[call.index("--domain-type") + 1] == "appDataContainer"
    assert call[call.index("--domain-identifier") + 1] == BUNDLE
    assert call[call.index("--source") + 1] == LOG


async def test_follow_log_yields_every_line_once_while_the_app_writes(
    device: DevicectlDevice, fake_xcrun: FakeXcrun, tmp_path: Path
) -> None:
    mirror = tmp_path / "mirror" / "t1.log"
    follow = device.follow_log(BUNDLE, LOG, mirror)
    async with contextlib.aclosing(follow):
        # Started before the app: the file does not exist yet, which is simply waited for.
        first = asyncio.ensure_future(Items(follow).until(is_end))
        await wait_until(lambda: len(fake_xcrun.calls_of("device", "copy", "from")) >= 2)
        pid = await device.launch(BUNDLE, {**ENV, "AB_TRIALS": "20"})
        items = await first
    assert all(isinstance(item, str) for item in items)  # no gap, no reset
    assert items == fake_xcrun.container_file(BUNDLE, LOG).read_text().splitlines()
    assert [line.split()[0] for line in items[:2]] == ["START", "LOAD"]
    assert sum(line.startswith("TRIAL ") for line in items) == 21
    assert mirror.read_text().splitlines() == items
    await device.terminate(pid)


async def test_follow_log_marks_a_gap_while_the_device_is_gone(
    device: DevicectlDevice, fake_xcrun: FakeXcrun, tmp_path: Path
) -> None:
    fake_xcrun.configure(trial_s=0.05)
    mirror = tmp_path / "t1.log"
    await device.launch(BUNDLE, {**ENV, "AB_TRIALS": "30"})
    follow = device.follow_log(BUNDLE, LOG, mirror)
    async with contextlib.aclosing(follow):
        items = Items(follow)
        before = await items.until(lambda item: isinstance(item, str))
        fake_xcrun.configure(gone="invalidated")
        during = await items.until(lambda item: isinstance(item, LogGap))
        fake_xcrun.configure(gone="")
        after = await items.until(is_end)
    gap = during[-1]
    assert isinstance(gap, LogGap) and gap.state == "begin"
    assert "Connection was invalidated" in gap.reason
    assert isinstance(after[0], LogGap) and after[0].state == "end"
    assert not any(isinstance(item, LogGap) for item in after[1:])
    lines = [item for item in [*before, *during, *after] if isinstance(item, str)]
    assert lines == fake_xcrun.container_file(BUNDLE, LOG).read_text().splitlines()


async def test_follow_log_reports_a_replaced_log_as_a_reset(
    device: DevicectlDevice, fake_xcrun: FakeXcrun, tmp_path: Path
) -> None:
    source = fake_xcrun.container_file(BUNDLE, LOG)
    source.parent.mkdir(parents=True)
    source.write_text("START arm=a\nTRIAL arm=a trial=1\n")
    follow = device.follow_log(BUNDLE, LOG, tmp_path / "t1.log")
    async with contextlib.aclosing(follow):
        items = Items(follow)
        first = await items.until(lambda item: item == "TRIAL arm=a trial=1")
        source.write_text("START arm=b\n")  # another log, shorter: not a prefix of the first
        second = await items.until(lambda item: item == "START arm=b")
    assert first == ["START arm=a", "TRIAL arm=a trial=1"]
    assert isinstance(second[0], LogReset) and second[1:] == ["START arm=b"]
