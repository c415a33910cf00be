"""The virtual iPhone: what the real pymobiledevice3 client sees of it."""

from __future__ import annotations

import asyncio
import logging
import plistlib
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from anemon.devices.base import Telemetry
from anemon.devices.pmd3 import Pmd3Device
from anemon.devices.virtual import VirtualIPhone
from anemon.devices.virtual.afc import SERVICE_NAME as HOUSE_ARREST
from anemon.devices.virtual.lockdownd import LOCKDOWN_PORT, Lockdownd
from anemon.devices.virtual.plist_io import prefixed_packet, usbmux_packet
from anemon.simulator import SimConfig, SimulatedIPhone
from anemon.sources.refresh import WINDOW
from tests.devices.helpers import BUNDLE, LOG, StandInPhone

TIMEOUT_S = 15


async def test_listens_on_loopback_only(phone: VirtualIPhone) -> None:
    host, port = phone.usbmux_address.split(":")
    assert host == "127.0.0.1" and int(port) > 0


async def test_detach_stops_listing_and_attach_lists_again(phone: VirtualIPhone) -> None:
    from pymobiledevice3.usbmux import list_devices

    async with asyncio.timeout(TIMEOUT_S):
        assert [d.serial for d in await list_devices()] == [phone.udid]
        phone.detach()
        assert await list_devices() == []
        phone.attach()
        assert [d.serial for d in await list_devices()] == [phone.udid]


async def test_detach_cuts_open_service_connections(phone: VirtualIPhone, pmd3: Pmd3Device) -> None:
    from pymobiledevice3.exceptions import ConnectionTerminatedError

    async with asyncio.timeout(TIMEOUT_S):
        lockdown = await pmd3.connection.lockdown()
        phone.detach()
        with pytest.raises((ConnectionTerminatedError, ConnectionError)):
            await lockdown.service.send_recv_plist({"Request": "QueryType"})
        await pmd3.close()


async def test_lockdown_values_and_errors(phone: VirtualIPhone, pmd3: Pmd3Device) -> None:
    from pymobiledevice3.exceptions import InvalidServiceError, MissingValueError

    async with asyncio.timeout(TIMEOUT_S):
        lockdown = await pmd3.connection.lockdown()
        assert await lockdown.get_value(key="DeviceName") == "Virtual iPhone"
        assert (await lockdown.get_value(domain="com.apple.disk_usage"))["TotalDiskCapacity"] == (
            128_000_000_000
        )
        with pytest.raises(MissingValueError):
            await lockdown.get_value(key="NoSuchKey")
        with pytest.raises(InvalidServiceError):
            await lockdown.start_lockdown_service("com.apple.instruments.remoteserver")
        await pmd3.close()


async def test_afc_lists_the_container_and_reports_disk(
    phone: VirtualIPhone, pmd3: Pmd3Device, stand_in: StandInPhone
) -> None:
    from pymobiledevice3.exceptions import AfcFileNotFoundError
    from pymobiledevice3.services.house_arrest import HouseArrestService

    stand_in.append("x\n")
    async with asyncio.timeout(TIMEOUT_S):
        lockdown = await pmd3.connection.lockdown()
        async with await HouseArrestService.create(lockdown, BUNDLE) as afc:
            assert await afc.listdir("/Documents/sustain") == ["bench.log"]
            assert await afc.isdir("Documents")
            assert (await afc.get_device_info())["FSFreeBytes"] == "38500000000"
            with pytest.raises(AfcFileNotFoundError):
                await afc.stat("Documents/missing.log")
        await pmd3.close()


async def test_a_bad_client_is_dropped_and_the_rest_keep_working(phone: VirtualIPhone) -> None:
    from pymobiledevice3.usbmux import list_devices

    host, port = phone.usbmux_address.split(":")
    async with asyncio.timeout(TIMEOUT_S):
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(usbmux_packet(1, {"MessageType": "ReadBUID"}))
        writer.write(struct.pack("<IIII", 16 + 5, 1, 8, 2) + b"hello")  # not a plist
        await writer.drain()
        assert b"BUID" in await reader.read()  # answered, then dropped
        writer.close()
        assert len(await list_devices()) == 1


async def test_stop_leaves_nothing_listening(stand_in: StandInPhone) -> None:
    from pymobiledevice3.exceptions import ConnectionFailedToUsbmuxdError
    from pymobiledevice3.usbmux import list_devices

    phone = VirtualIPhone(stand_in, bundles=[BUNDLE])
    await phone.start()
    address = phone.usbmux_address
    await phone.stop()
    with pytest.raises(ConnectionFailedToUsbmuxdError):
        async with asyncio.timeout(TIMEOUT_S):
            await list_devices(usbmux_address=address)


async def test_the_simulated_bench_app_log_is_mirrored_as_it_runs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    sim = SimulatedIPhone(SimConfig())
    sim.launch(BUNDLE, {"AB_MODEL": "minicpm5_1b_ane_pal8"})
    sim.advance(10)
    pmd3 = Pmd3Device(poll_s=0.01, reconnect_s=0.01, pairing_records_cache_folder=tmp_path / "p")
    async with VirtualIPhone(sim, bundles=[BUNDLE]) as phone:
        monkeypatch.setenv("USBMUXD_SOCKET_ADDRESS", phone.usbmux_address)
        follow = pmd3.follow_log(BUNDLE, LOG, tmp_path / "bench.log")
        try:
            async with asyncio.timeout(TIMEOUT_S):
                first = await anext(follow)
                sim.advance(30)
                second = await anext(follow)
        finally:
            await follow.aclose()
            await pmd3.close()
        telemetry = sim.telemetry()
    written = sim.container_files(BUNDLE)[LOG]
    assert first[0].startswith("START arm=minicpm5_1b_ane_pal8")
    assert second and all(isinstance(line, str) for line in second)
    assert "\n".join([*first, *second]) + "\n" == written.decode()
    stats = phone.afc_stats  # each byte once, and per read at most the window the rule compares
    assert len(written) <= stats.bytes_read <= len(written) + stats.reads * WINDOW
    assert (tmp_path / "bench.log").read_bytes() == written
    assert telemetry.battery_percent > 0


async def battery_entry(
    sim: SimulatedIPhone, tmp_path: Path
) -> tuple[dict[str, Any], Telemetry | None]:
    """IOPMPowerSource as the real client reads it from the virtual iPhone, and what the
    pymobiledevice3 backend makes of it."""
    from pymobiledevice3.services.diagnostics import DiagnosticsService

    async with VirtualIPhone(sim, bundles=[BUNDLE]) as phone:
        pmd3 = Pmd3Device(
            usbmux_address=phone.usbmux_address, pairing_records_cache_folder=tmp_path / "p"
        )
        try:
            async with asyncio.timeout(TIMEOUT_S):
                lockdown = await pmd3.connection.lockdown()
                async with DiagnosticsService(lockdown) as diagnostics:
                    entry = await diagnostics.get_battery()
                telemetry = await pmd3.telemetry()
        finally:
            await pmd3.close()
    assert entry is not None
    return entry, telemetry


async def test_the_real_client_reads_the_simulated_power_unplugged(tmp_path: Path) -> None:
    """Unplugged (reached over the network, say), decoding: |InstantAmperage| x Voltage is the
    simulator's device power, and the battery drains."""
    sim = SimulatedIPhone(SimConfig(plugged=False))
    sim.launch(BUNDLE, {"AB_MODEL": "minicpm5_1b_ane_pal8"})
    sim.advance(20)
    entry, telemetry = await battery_entry(sim, tmp_path)
    reading = sim.telemetry()
    assert entry["IsCharging"] is False and entry["ExternalConnected"] is False
    assert entry["InstantAmperage"] < 0
    watts = abs(entry["InstantAmperage"]) * entry["Voltage"] / 1e6
    assert watts == pytest.approx(reading.power_w, rel=0.002)
    assert 4.0 < watts < 4.8  # the ANE arm, cool, near its 4.5 W burst
    assert 4000 < entry["Voltage"] < 4200
    assert entry["CurrentCapacity"] == round(reading.battery_percent)
    assert entry["NominalChargeCapacity"] == 4250
    assert entry["AppleRawCurrentCapacity"] == round(reading.battery_percent * 42.5) < 4250 * 0.95
    assert entry["Temperature"] == round(reading.temperature_c * 100)
    assert telemetry is not None and telemetry.charging is False
    if telemetry.power_w is not None:  # the backend reads power (plan v2)
        assert telemetry.power_w == pytest.approx(watts, rel=0.01)


async def test_the_real_client_reads_a_charging_current(tmp_path: Path) -> None:
    """Plugged below its limit: charging, the battery current positive (the charger's)."""
    sim = SimulatedIPhone(SimConfig(plugged=True, battery_percent=60.0))
    sim.launch(BUNDLE, {"AB_MODEL": "minicpm5_1b_gpu_int8"})
    sim.advance(20)
    entry, telemetry = await battery_entry(sim, tmp_path)
    assert entry["IsCharging"] is True and entry["ExternalConnected"] is True
    assert entry["InstantAmperage"] == sim.telemetry().amperage_ma > 0
    assert entry["CurrentCapacity"] == 60
    assert telemetry is not None and telemetry.charging is True


# -- well-framed requests with fields of the wrong type ------------------------------------------

Stream = tuple[asyncio.StreamReader, asyncio.StreamWriter]


async def _usbmux(stream: Stream, request: dict[str, Any]) -> dict[str, Any]:
    """One usbmuxd exchange: the request, its reply's plist."""
    reader, writer = stream
    writer.write(usbmux_packet(7, request))
    await writer.drain()
    length, *_ = struct.unpack("<IIII", await reader.readexactly(16))
    return dict(plistlib.loads(await reader.readexactly(length - 16)))


async def _prefixed(stream: Stream, request: dict[str, Any]) -> dict[str, Any]:
    """One lockdownd-style exchange (4-byte big-endian length + plist)."""
    reader, writer = stream
    writer.write(prefixed_packet(request))
    await writer.drain()
    (length,) = struct.unpack(">I", await reader.readexactly(4))
    return dict(plistlib.loads(await reader.readexactly(length)))


class Client:
    """Raw connections to a virtual iPhone (closed by `close`)."""

    def __init__(self, phone: VirtualIPhone) -> None:
        self.phone = phone
        self.writers: list[asyncio.StreamWriter] = []

    async def usbmuxd(self) -> Stream:
        host, port = self.phone.usbmux_address.split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        self.writers.append(writer)
        return reader, writer

    async def device_port(self, port: int) -> Stream:
        """A socket to one of the phone's ports, through usbmuxd's Connect."""
        stream = await self.usbmuxd()
        swapped = int.from_bytes(port.to_bytes(2, "big"), "little")
        connect = {
            "MessageType": "Connect",
            "DeviceID": self.phone.device_id,
            "PortNumber": swapped,
        }
        assert (await _usbmux(stream, connect))["Number"] == 0
        return stream

    def close(self) -> None:
        for writer in self.writers:
            writer.close()


@pytest.fixture
def client(phone: VirtualIPhone) -> Iterator[Client]:
    raw = Client(phone)
    yield raw
    raw.close()


async def _odd_port_number(client: Client) -> dict[str, Any]:
    connect = {"MessageType": "Connect", "DeviceID": client.phone.device_id, "PortNumber": "62078"}
    return await _usbmux(await client.usbmuxd(), connect)


async def _odd_key(client: Client) -> dict[str, Any]:
    lockdownd = await client.device_port(LOCKDOWN_PORT)
    return await _prefixed(lockdownd, {"Request": "GetValue", "Key": ["DeviceName"]})


async def _odd_identifier(client: Client) -> dict[str, Any]:
    lockdownd = await client.device_port(LOCKDOWN_PORT)
    started = await _prefixed(lockdownd, {"Request": "StartService", "Service": HOUSE_ARREST})
    house_arrest = await client.device_port(started["Port"])
    return await _prefixed(house_arrest, {"Command": "VendContainer", "Identifier": {"a": 1}})


@pytest.mark.parametrize(
    ("ask", "refusal"),
    [
        (_odd_port_number, {"MessageType": "Result", "Number": 1}),  # usbmuxd's BadCommand
        (_odd_key, {"Error": "InvalidRequest"}),
        (_odd_identifier, {"Error": "ApplicationLookupFailed"}),
    ],
    ids=["a string PortNumber", "a list Key", "a dict Identifier"],
)
async def test_a_field_of_the_wrong_type_gets_an_error_reply_not_a_traceback(
    phone: VirtualIPhone,
    client: Client,
    caplog: pytest.LogCaptureFixture,
    ask: Any,
    refusal: dict[str, Any],
) -> None:
    from pymobiledevice3.usbmux import list_devices

    caplog.set_level(logging.DEBUG)
    async with asyncio.timeout(TIMEOUT_S):
        assert await ask(client) == refusal
        assert [d.serial for d in await list_devices()] == [phone.udid]  # still serving
    assert [
        r.getMessage() for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR
    ] == []


async def test_a_request_no_handler_foresaw_drops_that_connection_in_one_logged_line(
    phone: VirtualIPhone,
    client: Client,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pymobiledevice3.usbmux import list_devices

    def broken(*_: Any) -> Any:
        raise ValueError("a bug in a handler")

    monkeypatch.setattr(Lockdownd, "answer", broken)
    async with asyncio.timeout(TIMEOUT_S):
        reader, writer = await client.device_port(LOCKDOWN_PORT)
        writer.write(prefixed_packet({"Request": "QueryType"}))
        assert await reader.read() == b""  # hung up on
        assert [d.serial for d in await list_devices()] == [phone.udid]
    dropped = [r for r in caplog.records if "dropping a connection" in r.getMessage()]
    assert [r.getMessage() for r in dropped] == [
        "virtual iPhone: dropping a connection: ValueError: a bug in a handler"
    ]
    assert not any(r.exc_info for r in caplog.records)
