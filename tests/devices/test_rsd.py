"""The iOS 17+ route of the virtual iPhone: a stand-in tunneld and RSD, with the real
pymobiledevice3 client on the other side (loopback only; tunneld never on its real port)."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest

from anemon.devices.base import DeviceError
from anemon.devices.pmd3 import dvt
from anemon.devices.pmd3.errors import DeveloperToolsMissing
from anemon.devices.virtual import DEFAULT_UDID, VirtualIPhone
from anemon.devices.virtual.rsd import VirtualRsd
from anemon.devices.virtual.tunneld import VirtualTunneld
from tests.devices.helpers import BUNDLE, LOG, TIMEOUT_S, StandInPhone
from tests.devices.rsd_route import IOS, found, tunnelled


@pytest.fixture
def ios17(phone: VirtualIPhone) -> VirtualIPhone:
    """The virtual iPhone as an iOS 17 phone (DVT only over RSD)."""
    phone.product_version = IOS
    return phone


@pytest.fixture
async def served(
    ios17: VirtualIPhone, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[VirtualRsd, VirtualTunneld]]:
    async with tunnelled(ios17, monkeypatch) as pair:
        yield pair


@pytest.fixture
def rsd(served: tuple[VirtualRsd, VirtualTunneld]) -> VirtualRsd:
    return served[0]


@pytest.fixture
def tunneld(served: tuple[VirtualRsd, VirtualTunneld]) -> VirtualTunneld:
    return served[1]


@pytest.fixture
async def client(tunneld: VirtualTunneld, ios17: VirtualIPhone) -> AsyncIterator[Any]:
    """The real client's RSD, found through the stand-in tunneld."""
    async with found(ios17.udid) as rsd:
        yield rsd


async def test_tunneld_through_the_seam_gives_the_phones_rsd(
    client: Any, ios17: VirtualIPhone, rsd: VirtualRsd
) -> None:
    assert client.udid == ios17.udid
    assert client.product_version == IOS
    assert client.product_type == "iPhone16,1"
    assert client.service.address == ("127.0.0.1", rsd.port)
    assert rsd.stats.handshakes == 1


async def test_the_handshake_lists_dtservicehub_and_the_shims_anemon_opens(
    client: Any, rsd: VirtualRsd
) -> None:
    services = client.peer_info["Services"]
    for name in (
        "com.apple.mobile.house_arrest.shim.remote",
        "com.apple.mobile.diagnostics_relay.shim.remote",
        "com.apple.os_trace_relay.shim.remote",
    ):
        assert client.get_service_port(name) == rsd.ports[name].port
    assert set(services) == set(rsd.ports)
    assert client.product_build_version == "22F76"


async def test_the_remote_lockdown_answers_over_the_checkin(client: Any) -> None:
    """pymobiledevice3 opens `lockdown.remote.trusted` during connect: its values come through."""
    assert client.lockdown is not None
    assert await client.get_value(key="DeviceName") == "Virtual iPhone"


async def test_open_rsd_falls_back_from_the_userspace_tunnel_to_tunneld(
    tunneld: VirtualTunneld, ios17: VirtualIPhone
) -> None:
    """No CoreDeviceProxy on the virtual phone (as on iOS 17.0-17.3): tunneld's RSD."""
    async with asyncio.timeout(TIMEOUT_S):
        connected, close = await dvt.open_rsd(ios17.udid)
        assert connected.udid == ios17.udid
        await close()


async def test_the_container_log_comes_over_the_house_arrest_shim(
    client: Any, stand_in: StandInPhone, ios17: VirtualIPhone
) -> None:
    from pymobiledevice3.services.house_arrest import HouseArrestService

    stand_in.append("LOAD model=x footprint_gb=1.3\n")
    async with asyncio.timeout(TIMEOUT_S):
        async with await HouseArrestService.create(client, BUNDLE) as afc:
            assert await afc.get_file_contents(LOG) == b"LOAD model=x footprint_gb=1.3\n"
    assert ios17.service_starts["com.apple.mobile.house_arrest.shim.remote"] == 1
    assert ios17.service_starts["com.apple.mobile.house_arrest"] == 0  # not through lockdownd


async def test_the_battery_comes_over_the_diagnostics_shim(client: Any) -> None:
    from pymobiledevice3.services.diagnostics import DiagnosticsService

    async with asyncio.timeout(TIMEOUT_S):
        async with DiagnosticsService(client) as diagnostics:
            battery = await diagnostics.get_battery()
    assert battery["Voltage"] == 4100


async def test_a_service_the_phone_does_not_list_is_refused(client: Any) -> None:
    from pymobiledevice3.exceptions import InvalidServiceError

    with pytest.raises(InvalidServiceError):
        await client.start_lockdown_service("com.apple.mobile.screenshotr.shim.remote")


async def test_a_malformed_xpc_message_is_a_counted_warning(
    rsd: VirtualRsd, caplog: pytest.LogCaptureFixture
) -> None:
    """Garbage in a DATA frame is dropped: the handshake that follows is answered."""
    from hyperframe.frame import DataFrame
    from pymobiledevice3.remote.remotexpc import RemoteXPCConnection

    connection = RemoteXPCConnection(("127.0.0.1", rsd.port))
    with caplog.at_level(logging.WARNING):
        async with asyncio.timeout(TIMEOUT_S):
            await connection.connect()
            await connection._send_frame(DataFrame(stream_id=1, data=b"not xpc at all"))
            await connection.send_device_handshake()
            peer_info = await connection.receive_response()
            await connection.close()
    assert peer_info["MessageType"] == "Handshake"
    assert rsd.stats.malformed == 1
    [record] = [r for r in caplog.records if r.name == "anemon.devices.virtual.rsd"]
    assert "not XPC (1 so far)" in record.getMessage()
    assert record.exc_info is None


async def test_tunneld_without_the_phone_says_to_start_a_tunnel(
    tunneld: VirtualTunneld, ios17: VirtualIPhone
) -> None:
    tunneld.remove(ios17.udid)
    with pytest.raises(DeviceError) as caught:
        async with asyncio.timeout(TIMEOUT_S):
            await dvt.tunneld_rsd(ios17.udid)
    assert "tunnel" in str(caught.value)


async def test_a_launch_on_ios17_with_no_tunneld_there_says_how_to_get_one(
    ios17: VirtualIPhone, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The seam points at a loopback port nobody listens on: never at 49151."""
    import socket

    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        monkeypatch.setenv(dvt.TUNNELD_ADDRESS, f"127.0.0.1:{closed.getsockname()[1]}")
    with pytest.raises(DeveloperToolsMissing) as caught:
        async with asyncio.timeout(TIMEOUT_S):
            await dvt.tunneld_rsd(ios17.udid)
    assert "remote tunneld" in str(caught.value)


@pytest.mark.parametrize("value", ["49151", "127.0.0.1:", "localhost:port"])
def test_a_tunneld_address_that_is_not_host_port_is_one_line(
    value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(dvt.TUNNELD_ADDRESS, value)
    with pytest.raises(DeviceError) as caught:
        dvt.tunneld_address()
    assert str(caught.value).startswith(f"{dvt.TUNNELD_ADDRESS}={value!r} is not HOST:PORT")


def test_the_default_tunneld_address_is_the_real_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(dvt.TUNNELD_ADDRESS, raising=False)
    assert dvt.tunneld_address() == ("127.0.0.1", 49151)
    monkeypatch.setenv(dvt.TUNNELD_ADDRESS, "[::1]:5000")
    assert dvt.tunneld_address() == ("::1", 5000)


async def test_an_unplug_takes_the_tunnel_down_and_a_replug_brings_it_back(
    client: Any, ios17: VirtualIPhone, rsd: VirtualRsd, stand_in: StandInPhone
) -> None:
    from pymobiledevice3.exceptions import ConnectionTerminatedError
    from pymobiledevice3.services.house_arrest import HouseArrestService

    stand_in.append("a line\n")
    async with asyncio.timeout(TIMEOUT_S):
        afc = await HouseArrestService.create(client, BUNDLE)
        ios17.detach()
        rsd.tunnel_down()
        with pytest.raises((ConnectionTerminatedError, ConnectionError)):
            await afc.listdir("/")
        await afc.close()
        with pytest.raises(DeviceError):  # tunneld lists no tunnel to an unplugged phone
            await dvt.tunneld_rsd(ios17.udid)
        ios17.attach()
        again = await dvt.tunneld_rsd(ios17.udid)
        async with await HouseArrestService.create(again, BUNDLE) as afc:
            assert await afc.get_file_contents(LOG) == b"a line\n"
        await again.close()


async def test_the_command_line_phone_on_ios17_serves_the_route(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`python -m anemon.devices.virtual --ios 17.5.1`: both exports lead the real client to
    its RSD, and house_arrest answers over the shim."""
    from pymobiledevice3.services.house_arrest import HouseArrestService

    argv = [sys.executable, "-m", "anemon.devices.virtual", "--ios", IOS, "--seconds", "60"]
    child = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    try:
        async with asyncio.timeout(TIMEOUT_S * 2):
            assert child.stdout is not None and child.stderr is not None
            for _ in range(2):
                name, _, value = (await child.stdout.readline()).decode().strip().partition("=")
                monkeypatch.setenv(name.removeprefix("export "), value)
            assert (
                "iOS 17.5.1 (DVT over RSD at 127.0.0.1:" in (await child.stderr.readline()).decode()
            )
            connected = await dvt.tunneld_rsd(DEFAULT_UDID)
            try:
                async with await HouseArrestService.create(connected, "com.example.bench") as afc:
                    assert int((await afc.get_device_info())["FSTotalBytes"]) > 0
            finally:
                await connected.close()
        assert os.environ[dvt.TUNNELD_ADDRESS].startswith("127.0.0.1:")
    finally:
        child.kill()
        await child.wait()
