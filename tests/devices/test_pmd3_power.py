"""Device power through the pymobiledevice3 backend, with the real client, against the virtual
iPhone: over usbmuxd and over the network (lockdown over TCP), one diagnostics connection for
every sample, absurd and missing readings, a phone that goes away and comes back."""

from __future__ import annotations

import asyncio
import contextlib
import plistlib
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from anemon.clock import RealClock
from anemon.devices import backend
from anemon.devices.base import DeviceError, DeviceGone, DeviceSpec, PowerSource, Telemetry
from anemon.devices.pmd3 import Pmd3Device, power_from
from anemon.devices.pmd3.connection import split_host
from anemon.devices.pmd3.errors import PairingNeeded
from anemon.devices.virtual import NetworkLockdownd, VirtualIPhone
from anemon.devices.virtual.diagnostics import DiagnosticsRelay
from anemon.errors import AnemonError
from anemon.events import Event, GapEvent, MarkerEvent, TelemetryEvent
from anemon.pipeline import Pipeline, poll_power
from tests.devices.helpers import TIMEOUT_S, StandInPhone

DIAGNOSTICS = "com.apple.mobile.diagnostics_relay"


def unplug_readings(stand_in: StandInPhone, *, amperage_ma: int, voltage_mv: int = 4000) -> None:
    """The phone on its battery, drawing |amperage| x voltage."""
    r = stand_in.readings
    r.plugged, r.charging, r.amperage_ma, r.voltage_mv = False, False, amperage_ma, voltage_mv


async def eventually(predicate: Callable[[], object]) -> None:
    async with asyncio.timeout(TIMEOUT_S):
        while not predicate():
            await asyncio.sleep(0.01)


# -- IOPMPowerSource to a reading -------------------------------------------------------------


def test_discharging_power_is_current_times_voltage() -> None:
    reading = power_from(
        {"InstantAmperage": -850, "Voltage": 4000, "IsCharging": False,
         "ExternalConnected": False, "Temperature": 3125, "CurrentCapacity": 80}
    )  # fmt: skip
    assert reading.telemetry == Telemetry(
        battery=80.0, charging=False, plugged=False, temperature_c=31.25, power_w=3.4
    )
    assert (reading.current_a, reading.voltage_v, reading.warning) == (-0.85, 4.0, "")


def test_while_charging_the_charger_current_is_reported_as_charging() -> None:
    reading = power_from({"InstantAmperage": 1200, "Voltage": 4100, "IsCharging": True,
                          "ExternalConnected": True})  # fmt: skip
    assert reading.telemetry.charging is True and reading.telemetry.plugged is True
    assert reading.telemetry.power_w == pytest.approx(4.92)


def test_unsigned_64_bit_current_is_read_as_negative() -> None:
    reading = power_from({"InstantAmperage": 2**64 - 500, "Voltage": 3900})
    assert reading.current_a == -0.5 and reading.telemetry.power_w == pytest.approx(1.95)


def test_raw_charge_over_nominal_capacity_is_the_finer_battery_percent() -> None:
    entry = {"CurrentCapacity": 87, "AppleRawCurrentCapacity": 3714, "NominalChargeCapacity": 4250}
    assert power_from(entry).telemetry.battery == 87.39
    assert power_from({**entry, "NominalChargeCapacity": 0}).telemetry.battery == 87.0


@pytest.mark.parametrize(
    "entry",
    [
        {"CurrentCapacity": 80, "IsCharging": False},  # older iOS: neither key
        {"CurrentCapacity": 80, "Voltage": 4000},
        {"CurrentCapacity": 80, "InstantAmperage": -400},
        {"CurrentCapacity": 80, "InstantAmperage": "n/a", "Voltage": True},
        {},
    ],
)
def test_without_current_or_voltage_power_is_none_and_no_warning(entry: dict[str, Any]) -> None:
    reading = power_from(entry)
    assert reading.telemetry.power_w is None and reading.warning == ""


@pytest.mark.parametrize(
    ("amperage", "voltage", "warning"),
    [
        (-12_000, 4000, "current -12.0 A is beyond 10 A"),
        (10_500, 4000, "current 10.5 A is beyond 10 A"),
        (-400, 5200, "voltage 5.20 V is outside 2.5-5 V"),
        (-400, 2400, "voltage 2.40 V is outside 2.5-5 V"),
    ],
)
def test_absurd_readings_are_dropped_with_a_warning(
    amperage: int, voltage: int, warning: str
) -> None:
    reading = power_from({"InstantAmperage": amperage, "Voltage": voltage, "CurrentCapacity": 50})
    assert reading.telemetry.power_w is None and reading.warning == warning
    assert reading.telemetry.battery == 50.0  # the rest of the reading stays


def test_bounds_are_inclusive() -> None:
    assert power_from({"InstantAmperage": -10_000, "Voltage": 5000}).telemetry.power_w == 50.0
    assert power_from({"InstantAmperage": -100, "Voltage": 2500}).warning == ""


# -- the real client against the virtual iPhone, both paths ----------------------------------


async def test_unplugged_power_over_either_path(
    phone: VirtualIPhone, either: Pmd3Device, stand_in: StandInPhone
) -> None:
    unplug_readings(stand_in, amperage_ma=-850)
    async with asyncio.timeout(TIMEOUT_S):
        reading = await either.power()
        await either.close()
    assert reading is not None
    assert (reading.power_w, reading.charging, reading.plugged) == (3.4, False, False)
    assert reading.temperature_c == 31.25 and reading.battery == pytest.approx(87.4, abs=0.02)
    assert (reading.free_gb, reading.total_gb) == (None, None)  # disk is the slow telemetry's


async def test_charging_over_either_path(
    phone: VirtualIPhone, either: Pmd3Device, stand_in: StandInPhone
) -> None:
    stand_in.readings.amperage_ma, stand_in.readings.voltage_mv = 1200, 4100
    async with asyncio.timeout(TIMEOUT_S):
        reading = await either.power()
        await either.close()
    assert reading is not None and reading.charging is True and reading.plugged is True
    assert reading.power_w == pytest.approx(4.92)


async def test_one_diagnostics_connection_for_every_sample(
    phone: VirtualIPhone, either: Pmd3Device, stand_in: StandInPhone
) -> None:
    async with asyncio.timeout(TIMEOUT_S):
        for i in range(25):
            unplug_readings(stand_in, amperage_ma=-400 - 10 * i)
            reading = await either.power()
            assert reading is not None and reading.power_w == pytest.approx(1.6 + 0.04 * i)
        telemetry = await either.telemetry()  # the slow poll shares the connection
        await either.close()
    assert telemetry is not None and telemetry.free_gb == 38.5 and telemetry.power_w is not None
    assert phone.service_starts[DIAGNOSTICS] == 1
    assert either.power_reader.opened == 1


async def test_the_network_path_does_not_touch_usbmuxd_once_connected(
    phone: VirtualIPhone, network: NetworkLockdownd, pmd3_network: Pmd3Device
) -> None:
    async with asyncio.timeout(TIMEOUT_S):
        await pmd3_network.connect()
        for _ in range(10):
            await pmd3_network.power()
        await pmd3_network.close()
    assert network.connections == 2  # lockdownd, and the one diagnostics service


async def test_polling_twice_at_once_shares_the_connection(
    phone: VirtualIPhone, pmd3: Pmd3Device
) -> None:
    async with asyncio.timeout(TIMEOUT_S):
        readings = await asyncio.gather(*(pmd3.power() for _ in range(8)), pmd3.telemetry())
        await pmd3.close()
    assert all(r is not None and r.power_w == pytest.approx(4.92) for r in readings)
    assert phone.service_starts[DIAGNOSTICS] == 1


async def test_a_registry_without_current_or_voltage_gives_no_power(
    phone: VirtualIPhone, either: Pmd3Device, monkeypatch: pytest.MonkeyPatch
) -> None:
    served = DiagnosticsRelay.power_source

    def older_ios(self: DiagnosticsRelay) -> dict[str, Any]:
        entry = served(self)
        return {k: v for k, v in entry.items() if k not in ("InstantAmperage", "Voltage")}

    monkeypatch.setattr(DiagnosticsRelay, "power_source", older_ios)
    async with asyncio.timeout(TIMEOUT_S):
        reading = await either.power()
        await either.close()
    assert reading is not None and reading.power_w is None and reading.charging is True
    assert either.power_warnings == 0


async def test_absurd_readings_are_dropped_and_counted(
    phone: VirtualIPhone, either: Pmd3Device, stand_in: StandInPhone
) -> None:
    async with asyncio.timeout(TIMEOUT_S):
        unplug_readings(stand_in, amperage_ma=-15_000)
        too_much = await either.power()
        unplug_readings(stand_in, amperage_ma=-400, voltage_mv=7000)
        overvolt = await either.power()
        unplug_readings(stand_in, amperage_ma=-400)
        sane = await either.power()
        await either.close()
    assert too_much is not None and too_much.power_w is None and too_much.plugged is False
    assert overvolt is not None and overvolt.power_w is None
    assert sane is not None and sane.power_w == 1.6
    assert either.power_warnings == 2
    assert either.power_reader.last_warning == "voltage 7.00 V is outside 2.5-5 V"


async def test_a_failed_read_raises_then_the_next_one_reconnects(
    phone: VirtualIPhone, pmd3: Pmd3Device
) -> None:
    async with asyncio.timeout(TIMEOUT_S):
        assert await pmd3.power() is not None
        phone.detach()
        with pytest.raises(DeviceGone):
            await pmd3.power()
        phone.attach()
        assert await pmd3.power() is not None
        await pmd3.close()
    assert pmd3.power_reader.opened == 2  # reopened once, after the drop


async def test_over_the_network_the_cable_can_come_out(
    phone: VirtualIPhone, pmd3_network: Pmd3Device, stand_in: StandInPhone
) -> None:
    async with asyncio.timeout(TIMEOUT_S):
        assert await pmd3_network.power() is not None
        phone.detach()  # the cable out: usbmuxd no longer lists the phone
        unplug_readings(stand_in, amperage_ma=-900)
        readings = [await pmd3_network.power() for _ in range(3)]
        await pmd3_network.close()
    assert [r.power_w if r else None for r in readings] == [3.6, 3.6, 3.6]
    assert phone.service_starts[DIAGNOSTICS] == 1


async def test_off_the_network_is_a_clear_transient_error(
    phone: VirtualIPhone, network: NetworkLockdownd, pmd3_network: Pmd3Device
) -> None:
    async with asyncio.timeout(TIMEOUT_S):
        await pmd3_network.power()
        network.go_offline()
        with pytest.raises(DeviceGone) as gone:
            await pmd3_network.power()
        network.go_online()
        assert await pmd3_network.power() is not None
        await pmd3_network.close()
    assert gone.value.transient
    assert f"the iPhone at {network.address}" in str(gone.value)


# -- the poller -------------------------------------------------------------------------------


def collect(pipeline: Pipeline) -> list[Event]:
    events: list[Event] = []
    pipeline.subscribe(events.append)
    return events


@contextlib.asynccontextmanager
async def polling(pipeline: Pipeline, device: Pmd3Device, arm: str | None = None) -> Any:
    task = asyncio.create_task(poll_power(pipeline, device, RealClock(), 0.01, lambda: arm))
    try:
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await device.close()


def power_events(events: list[Event]) -> list[TelemetryEvent]:
    return [e for e in events if isinstance(e, TelemetryEvent)]


def gaps(events: list[Event]) -> list[tuple[str, str]]:
    return [(e.state, e.reason) for e in events if isinstance(e, GapEvent)]


async def test_the_poller_emits_readings_with_power(
    phone: VirtualIPhone, either: Pmd3Device, stand_in: StandInPhone
) -> None:
    unplug_readings(stand_in, amperage_ma=-850)
    pipeline = Pipeline()
    events = collect(pipeline)
    async with polling(pipeline, either, arm="ane"):
        await eventually(lambda: len(power_events(events)) >= 5)
    readings = power_events(events)
    assert {(e.power_w, e.charging, e.plugged, e.arm) for e in readings} == {
        (3.4, False, False, "ane")
    }
    assert {e.source for e in readings} == {"pymobiledevice3:power"}
    assert readings[0].battery_state == "unplugged"
    assert phone.service_starts[DIAGNOSTICS] == 1


async def test_a_phone_that_goes_away_is_a_gap_then_recovery(
    phone: VirtualIPhone, pmd3: Pmd3Device
) -> None:
    pipeline = Pipeline()
    events = collect(pipeline)
    async with polling(pipeline, pmd3):
        await eventually(lambda: power_events(events))
        phone.detach()
        await eventually(lambda: gaps(events))
        await asyncio.sleep(0.1)  # several failed reads: still one gap
        phone.attach()
        await eventually(lambda: len(gaps(events)) == 2)
        count = len(power_events(events))
        await eventually(lambda: len(power_events(events)) > count)
    (begin, why), back = gaps(events)
    assert begin == "begin" and "iPhone" in why  # gone, or not attached: the moment decides
    assert back == ("end", "power readings are back")
    (gap,) = [e for e in events if isinstance(e, GapEvent) and e.state == "begin"]
    assert gap.source == "pymobiledevice3:power"


async def test_off_the_network_is_a_gap_then_recovery(
    phone: VirtualIPhone, network: NetworkLockdownd, pmd3_network: Pmd3Device
) -> None:
    pipeline = Pipeline()
    events = collect(pipeline)
    async with polling(pipeline, pmd3_network):
        await eventually(lambda: power_events(events))
        network.go_offline()
        await eventually(lambda: gaps(events))
        network.go_online()
        await eventually(lambda: len(gaps(events)) == 2)
    assert [state for state, _ in gaps(events)] == ["begin", "end"]


async def test_absurd_readings_are_one_marker_per_run(
    phone: VirtualIPhone, pmd3: Pmd3Device, stand_in: StandInPhone
) -> None:
    pipeline = Pipeline()
    events = collect(pipeline)
    unplug_readings(stand_in, amperage_ma=-20_000)
    async with polling(pipeline, pmd3):
        await eventually(lambda: pmd3.power_warnings >= 3)
        unplug_readings(stand_in, amperage_ma=-500)
        await eventually(lambda: any(e.power_w == 2.0 for e in power_events(events)))
    markers = [e for e in events if isinstance(e, MarkerEvent)]
    assert len(markers) == 1 and "absurd power reading" in markers[0].note
    dropped = [e for e in power_events(events) if e.power_w is None]
    assert len(dropped) >= 3 and all(e.plugged is False for e in dropped)


async def test_the_poller_returns_at_once_for_a_backend_without_power() -> None:
    from anemon.devices.devicectl import DevicectlDevice

    pipeline = Pipeline()
    events = collect(pipeline)
    async with asyncio.timeout(1):
        await poll_power(pipeline, DevicectlDevice(""), RealClock(), 0.01)
    assert events == []


def test_pmd3_declares_power_and_devicectl_does_not() -> None:
    from anemon.devices.devicectl import DevicectlDevice

    assert isinstance(Pmd3Device(), PowerSource)
    assert not isinstance(DevicectlDevice(""), PowerSource)


# -- pairing over the network -----------------------------------------------------------------


def _closed_address() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


async def test_network_without_a_pair_record_says_how_to_pair(
    phone: VirtualIPhone, network: NetworkLockdownd, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setenv("USBMUXD_SOCKET_ADDRESS", _closed_address())  # no usbmuxd to ask
    device = Pmd3Device(connect="network", host=network.address,
                        pairing_records_cache_folder=tmp_path / "empty")  # fmt: skip
    async with asyncio.timeout(TIMEOUT_S):
        with pytest.raises(PairingNeeded) as refused:
            await device.connect()
    assert str(refused.value) == (
        f"no pair record for the iPhone at {network.address}: pair it over USB first "
        "(`pymobiledevice3 lockdown pair`), then turn on "
        "`pymobiledevice3 lockdown wifi-connections on`"
    )


async def test_network_pairs_with_a_record_in_the_folder_without_usbmuxd(
    phone: VirtualIPhone, network: NetworkLockdownd, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setenv("USBMUXD_SOCKET_ADDRESS", _closed_address())
    folder = tmp_path / "records"
    folder.mkdir()
    (folder / f"{phone.udid}.plist").write_bytes(plistlib.dumps(phone.pair_record()))
    for udid in (phone.udid, ""):  # known from the plan, or asked of the phone
        device = Pmd3Device(udid or None, connect="network", host=network.address,
                            pairing_records_cache_folder=folder)  # fmt: skip
        async with asyncio.timeout(TIMEOUT_S):
            info = await device.connect()
            reading = await device.power()
            await device.close()
        assert info.udid == phone.udid and reading is not None


async def test_network_refuses_another_phone_than_the_one_asked_for(
    phone: VirtualIPhone, network: NetworkLockdownd, tmp_path: Path
) -> None:
    folder = tmp_path / "records"
    folder.mkdir()
    other = "00008120-0000000000000BAD"
    (folder / f"{other}.plist").write_bytes(plistlib.dumps(phone.pair_record()))
    device = Pmd3Device(other, connect="network", host=network.address,
                        pairing_records_cache_folder=folder)  # fmt: skip
    async with asyncio.timeout(TIMEOUT_S):
        with pytest.raises(DeviceError, match=f"is {phone.udid}, not {other}"):
            await device.connect()


async def test_nothing_at_the_address_is_transient(tmp_path: Path) -> None:
    address = _closed_address()
    device = Pmd3Device(connect="network", host=address, pairing_records_cache_folder=tmp_path)
    async with asyncio.timeout(TIMEOUT_S):
        with pytest.raises(DeviceGone) as gone:
            await device.power()
    assert gone.value.transient and address in str(gone.value)


@pytest.mark.parametrize(
    ("host", "split"),
    [
        ("10.0.0.5", ("10.0.0.5", 62078)),
        ("10.0.0.5:1234", ("10.0.0.5", 1234)),
        ("iphone.local", ("iphone.local", 62078)),
        ("fe80::1", ("fe80::1", 62078)),
        ("[fe80::1]:1234", ("fe80::1", 1234)),
        ("[fe80::1]", ("fe80::1", 62078)),
    ],
)
def test_host_and_port(host: str, split: tuple[str, int]) -> None:
    assert split_host(host) == split


def test_the_registry_builds_the_network_backend() -> None:
    pmd3, clock = backend("pymobiledevice3"), RealClock()
    spec = DeviceSpec("pymobiledevice3", connect="network", host="10.0.0.5", power_s=0.5)
    device = pmd3.make(spec, clock)
    assert isinstance(device, Pmd3Device) and device.power_s == 0.5
    assert device.connection.host == "10.0.0.5"
    with pytest.raises(AnemonError, match=r"needs device\.host"):
        pmd3.make(DeviceSpec("pymobiledevice3", connect="network"), clock)
    with pytest.raises(AnemonError, match="usb or network"):
        pmd3.make(DeviceSpec("pymobiledevice3", connect="bluetooth"), clock)


def test_a_plan_reaches_the_phone_over_the_network() -> None:
    from anemon.control.plan import parse_plan
    from anemon.feeds.plan import make_device

    plan = parse_plan(
        'tag = "t"\n[device]\nkind = "pymobiledevice3"\nconnect = "network"\n'
        'host = "10.0.0.5:1234"\npower_s = 0.25\n[[arms]]\nname = "a"\n'
    )
    device = make_device(plan, RealClock())
    assert isinstance(device, Pmd3Device) and device.power_s == 0.25
    assert device.connection.host == "10.0.0.5:1234"
