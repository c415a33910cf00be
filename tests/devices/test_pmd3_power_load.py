"""The phone's system load (PowerTelemetryData) through the pymobiledevice3 backend: the
registry's values to a reading, dropped and counted when malformed, and the real client against
a virtual iPhone that publishes it, held between refreshes as a real controller holds it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from anemon.analysis.system_load import LoadSteps
from anemon.devices.base import Telemetry
from anemon.devices.pmd3 import Pmd3Device, power_from
from anemon.devices.pmd3.power import LoadChanges, SystemLoad, system_load_from
from anemon.devices.virtual import VirtualIPhone
from anemon.devices.virtual.__main__ import parse_args
from anemon.devices.virtual.diagnostics import SystemLoadData, power_telemetry
from anemon.pipeline import Pipeline
from tests.devices.helpers import BUNDLE, TIMEOUT_S, StandInPhone

REFRESH_S = 20.0
ENTRY = {"InstantAmperage": 1200, "Voltage": 4100, "IsCharging": True, "ExternalConnected": True}


def test_power_telemetry_data_is_read_in_watts() -> None:
    data = {"SystemLoad": 3450, "SystemPowerIn": 8120, "BatteryPower": 4670, "SystemVoltageIn": 5}
    reading = power_from({**ENTRY, "PowerTelemetryData": data})
    t = reading.telemetry
    assert (t.load_w, t.power_in_w, t.battery_power_w) == (3.45, 8.12, 4.67)
    assert t.charging is True and t.power_w == pytest.approx(4.92)  # the charger's, as before
    assert reading.load == SystemLoad(3.45, 8.12, 4.67)


def test_it_is_found_under_battery_data_too() -> None:
    entry = {**ENTRY, "BatteryData": {"PowerTelemetryData": {"SystemLoad": 2000}}}
    assert system_load_from(entry) == SystemLoad(load_w=2.0)


@pytest.mark.parametrize("entry", [ENTRY, {**ENTRY, "PowerTelemetryData": "n/a"}, {}])
def test_without_it_the_reading_has_no_load(entry: dict[str, Any]) -> None:
    reading = power_from(entry)
    assert reading.load is None and reading.telemetry.load_w is None


@pytest.mark.parametrize(
    ("data", "kept", "dropped"),
    [
        ({"SystemLoad": 45_000}, SystemLoad(), ("SystemLoad 45000 mW is outside 0 to 30 W",)),
        ({"SystemLoad": -500}, SystemLoad(), ("SystemLoad -500 mW is outside 0 to 30 W",)),
        ({"SystemLoad": "3450", "SystemPowerIn": 5000}, SystemLoad(power_in_w=5.0),
         ("SystemLoad '3450' is not a number",)),
        ({"SystemLoad": True}, SystemLoad(), ("SystemLoad 'True' is not a number",)),
        ({"BatteryPower": 2**64 - 1500}, SystemLoad(battery_power_w=-1.5), ()),
        ({}, SystemLoad(), ()),  # missing keys: None, nothing to count
    ],
)  # fmt: skip
def test_malformed_values_are_dropped_with_a_reason(
    data: dict[str, Any], kept: SystemLoad, dropped: tuple[str, ...]
) -> None:
    load = system_load_from({"PowerTelemetryData": data})
    assert load is not None and load.values == kept.values and load.dropped == dropped


def test_a_held_value_keeps_the_time_it_changed_and_the_refresh_is_the_median_gap() -> None:
    changes = LoadChanges()
    held = SystemLoad(2.0)
    assert changes.seen(held, 100.0) == 100.0  # first seen: its own time
    assert changes.seen(held, 101.0) == 100.0
    assert changes.refresh_s is None
    for wall, watts in ((110.0, 3.0), (111.0, 3.0), (130.0, 3.1), (150.0, 3.2), (171.0, 3.3)):
        changes.seen(SystemLoad(watts), wall)
    assert changes.changed_wall == 171.0
    assert changes.refresh_s == 20.0  # gaps 20, 20, 21: the first sighting is not a change


def test_any_of_the_three_changing_is_a_change() -> None:
    changes = LoadChanges()
    changes.seen(SystemLoad(2.0, 5.0, 3.0), 1.0)
    assert changes.seen(SystemLoad(2.0, 5.0, 2.9), 2.0) == 2.0


class DriftingClock:
    """A session clock and a wall clock read apart: their offset moves by a few tenths of a
    microsecond from one reading to the next, as a real host's do."""

    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        self.t += 1.0
        return self.t

    def wall(self) -> float:
        return 1_000.0 + self.t + 1e-7 * ((self.t * 7) % 5)

    async def sleep(self, seconds: float) -> None:
        raise AssertionError("nothing waits here")


def test_the_readings_of_one_change_say_one_time_whatever_the_clocks() -> None:
    """Each reading works the change's session time out from its own t and wall; the pipeline
    pins it to what the first reading of the change said, so the figures see one change, its
    refresh interval and its age (LoadSteps) as the phone made them."""
    pipeline = Pipeline(clock=DriftingClock())
    seen = []
    for changed_wall, watts, reads in ((1_000.5, 2.0, 5), (1_005.5, 3.0, 5), (1_010.5, 3.5, 4)):
        for _ in range(reads):
            reading = Telemetry(load_w=watts, load_changed_wall=changed_wall)
            seen.append(pipeline.emit_reading(reading, source="pymobiledevice3:power"))
    said = [event.load_changed_t for event in seen]
    assert said == [said[0]] * 5 + [said[5]] * 5 + [said[10]] * 4
    assert said[0] == pytest.approx(0.5) and said[5] == pytest.approx(5.5)
    t = np.array([e.t for e in seen])
    steps = LoadSteps.of(t, np.array([e.load_w for e in seen]), np.array(said, dtype=float))
    assert steps.w.tolist() == [2.0, 3.0, 3.5] and steps.refresh_s == pytest.approx(5.0)
    # each reading as it works it out alone: ~0.1 µs apart, more changes than there were
    walls = [1_000.5] * 5 + [1_005.5] * 5 + [1_010.5] * 4
    own = [Telemetry(load_w=e.load_w, load_changed_wall=wall).event(t=e.t, wall=e.wall, source="x")
           for e, wall in zip(seen, walls, strict=True)]  # fmt: skip
    alone = np.array([e.load_changed_t for e in own], dtype=float)
    assert len(LoadSteps.of(t, steps.w.repeat([5, 5, 4]), alone).t) > 3


def test_the_virtual_phone_publishes_its_power_held_for_a_refresh() -> None:
    sim = StandInPhone()
    data = SystemLoadData(REFRESH_S)
    sim.readings.power_w = 3.5
    first = data.at(0.0, sim.readings)
    sim.readings.power_w = 4.5
    assert data.at(19.9, sim.readings) == first  # held: the same period
    assert data.at(20.0, sim.readings)["SystemLoad"] == 4500
    # charging at 1200 mA x 4.1 V: the adapter feeds the load and the battery
    assert first == {"SystemLoad": 3500, "SystemPowerIn": 8420, "BatteryPower": 4920}
    sim.readings.plugged, sim.readings.amperage_ma = False, -1000
    assert power_telemetry(sim.readings) == {
        "SystemLoad": 4500, "SystemPowerIn": 0, "BatteryPower": -4100,
    }  # fmt: skip


def test_the_command_line_takes_a_refresh_in_seconds(capsys: pytest.CaptureFixture[str]) -> None:
    assert parse_args(["--system-load", "20"]).system_load == 20.0
    assert parse_args([]).system_load == 0  # not published
    for bad in ("-1", "inf", "nan"):
        with pytest.raises(SystemExit) as refused:
            parse_args(["--system-load", bad])
        assert refused.value.code == 2
    assert "--system-load nan: give seconds, 0 for none" in capsys.readouterr().err


# -- the real client against the virtual iPhone ---------------------------------------------


@pytest.fixture
async def loaded(
    stand_in: StandInPhone, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[VirtualIPhone]:
    async with VirtualIPhone(stand_in, bundles=[BUNDLE], system_load_s=REFRESH_S) as virtual:
        monkeypatch.setenv("USBMUXD_SOCKET_ADDRESS", virtual.usbmux_address)
        yield virtual


async def test_the_client_reads_the_load_and_when_it_last_changed(
    loaded: VirtualIPhone, stand_in: StandInPhone, tmp_path: Path
) -> None:
    device = Pmd3Device(pairing_records_cache_folder=tmp_path / "pair")
    stand_in.readings.power_w = 3.5
    async with asyncio.timeout(TIMEOUT_S):
        first = await device.power()
        stand_in.readings.power_w = 4.0  # within the period: the phone still shows 3.5 W
        held = await device.power()
        stand_in.now = REFRESH_S
        refreshed = await device.power()
        telemetry = await device.telemetry()  # the slow poll: the same load, the same change
        await device.close()
    assert first is not None and held is not None and refreshed is not None
    assert (first.load_w, held.load_w, refreshed.load_w) == (3.5, 3.5, 4.0)
    assert first.power_in_w == pytest.approx(3.5 + 4.92, abs=0.01)  # load + into the battery
    assert first.battery_power_w == pytest.approx(4.92, abs=0.01)
    assert held.load_changed_wall == first.load_changed_wall
    assert refreshed.load_changed_wall is not None and first.load_changed_wall is not None
    assert refreshed.load_changed_wall > first.load_changed_wall
    assert telemetry is not None and telemetry.load_w == 4.0
    assert telemetry.load_changed_wall == refreshed.load_changed_wall
    assert device.power_warnings == 0


async def test_an_absurd_load_is_dropped_and_counted_as_a_power_warning(
    loaded: VirtualIPhone, stand_in: StandInPhone, tmp_path: Path
) -> None:
    device = Pmd3Device(pairing_records_cache_folder=tmp_path / "pair")
    stand_in.readings.power_w = 45.0  # no phone draws this: the reading says so
    async with asyncio.timeout(TIMEOUT_S):
        reading = await device.power()
        await device.close()
    assert reading is not None and reading.load_w is None and reading.power_in_w is not None
    assert device.power_warnings == 1
    assert device.power_reader.last_warning == "SystemLoad 45000 mW is outside 0 to 30 W"


async def test_a_phone_that_does_not_publish_it_reads_as_before(
    phone: VirtualIPhone, pmd3: Pmd3Device
) -> None:
    async with asyncio.timeout(TIMEOUT_S):
        readings = [await pmd3.power() for _ in range(3)]
        await pmd3.close()
    assert all(r is not None and r.load_w is None and r.load_changed_wall is None for r in readings)
    assert all(r is not None and r.power_w == pytest.approx(4.92) for r in readings)
