"""Launch, kill and install through pymobiledevice3: what the user sees without the developer
disk image or a tunnel (the virtual iPhone answers `InvalidService` for DVT, as a real phone
does), and the two shapes the virtual phone's DVT does not make (a pid of 0, the iOS 17 tunnel)
at the session's boundary. Launches through the real DVT: test_virtual_dvt.py, dvt/."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from anemon.devices.base import DeviceError, LaunchRefused
from anemon.devices.pmd3 import Pmd3Device, dvt
from anemon.devices.pmd3.errors import DeveloperToolsMissing
from anemon.devices.pmd3.session import DvtSession
from anemon.devices.virtual import VirtualIPhone
from tests.devices.helpers import BUNDLE, StandInPhone

TIMEOUT_S = 30


@pytest.fixture
async def old_phone(
    stand_in: StandInPhone, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[VirtualIPhone]:
    async with VirtualIPhone(stand_in, bundles=[BUNDLE], product_version="16.7.10") as virtual:
        monkeypatch.setenv("USBMUXD_SOCKET_ADDRESS", virtual.usbmux_address)
        yield virtual


class FakeProcessControl:
    def __init__(self, pid: int = 4242) -> None:
        self.pid = pid
        self.calls: list[tuple[str, Any]] = []

    async def launch(self, bundle: str, **kwargs: Any) -> int:
        self.calls.append(("launch", (bundle, kwargs)))
        assert self.pid, "pymobiledevice3 asserts on a pid of 0"
        return self.pid

    async def kill(self, pid: int) -> None:
        self.calls.append(("kill", pid))


class FakeDvt:
    async def close(self) -> None:
        return None


def use_fake(monkeypatch: pytest.MonkeyPatch, pc: FakeProcessControl) -> list[Any]:
    """The session's connection opened over a fake ProcessControl; what it was opened over."""
    providers: list[Any] = []

    async def fake_open(self: DvtSession) -> None:
        providers.append(await self.connection.developer_provider())
        self._dvt, self._pc = FakeDvt(), pc

    monkeypatch.setattr(DvtSession, "_open", fake_open)
    return providers


async def test_launch_before_ios17_without_disk_image_says_to_mount_it(
    old_phone: VirtualIPhone, pmd3: Pmd3Device
) -> None:
    with pytest.raises(DeveloperToolsMissing) as caught:
        async with asyncio.timeout(TIMEOUT_S):
            await pmd3.launch(BUNDLE, {"AB_MODEL": "minicpm5_1b_ane_pal8"})
    await pmd3.close()
    assert "pymobiledevice3 mounter auto-mount" in str(caught.value)
    assert "Developer Mode" in str(caught.value)


async def test_launch_on_ios18_without_a_tunnel_says_how_to_get_one(
    phone: VirtualIPhone, pmd3: Pmd3Device, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real in-process tunnel finds no CoreDeviceProxy; tunneld is not running either."""
    from pymobiledevice3.exceptions import TunneldConnectionError

    async def no_tunneld(udid: str, *_: Any) -> Any:
        raise TunneldConnectionError()

    monkeypatch.setattr("pymobiledevice3.tunneld.api.get_tunneld_device_by_udid", no_tunneld)
    with pytest.raises(DeveloperToolsMissing) as caught:
        async with asyncio.timeout(TIMEOUT_S):
            await pmd3.launch(BUNDLE, {})
    await pmd3.close()
    assert "remote tunneld" in str(caught.value)


async def test_ios17_launches_use_the_rsd_tunnel(
    phone: VirtualIPhone, pmd3: Pmd3Device, monkeypatch: pytest.MonkeyPatch
) -> None:
    rsd, closed = object(), []

    async def open_rsd(udid: str) -> tuple[Any, Any]:
        async def close() -> None:
            closed.append(udid)

        return rsd, close

    monkeypatch.setattr(dvt, "open_rsd", open_rsd)
    providers = use_fake(monkeypatch, FakeProcessControl())
    async with asyncio.timeout(TIMEOUT_S):
        await pmd3.launch(BUNDLE, {})
        await pmd3.launch(BUNDLE, {})
        await pmd3.close()
    assert providers == [rsd]  # one tunnel and one DVT connection, kept open until close
    assert closed == [phone.udid]


async def test_a_pid_of_zero_is_a_refused_launch(
    old_phone: VirtualIPhone, pmd3: Pmd3Device, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake(monkeypatch, FakeProcessControl(pid=0))
    with pytest.raises(LaunchRefused) as caught:
        async with asyncio.timeout(TIMEOUT_S):
            await pmd3.launch(BUNDLE, {})
    await pmd3.close()
    assert caught.value.transient
    assert str(caught.value) == f"the iPhone refused to launch {BUNDLE} (no pid)"


async def test_install_runs_in_a_child_that_cannot_draw_on_the_terminal(
    phone: VirtualIPhone, pmd3: Pmd3Device, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """The virtual iPhone has no installation_proxy: the child's one-line error comes back."""
    app = tmp_path / "Bench.app"
    app.mkdir()
    (app / "Info.plist").write_bytes(b"")
    with pytest.raises(DeviceError) as caught:
        async with asyncio.timeout(TIMEOUT_S):
            await pmd3.install(app)
    await pmd3.close()
    assert "installation" in str(caught.value)
    out, err = capfd.readouterr()
    assert out == "" and err == ""
