"""The sim Device: refusals typed like a real device's, telemetry without thermal (with device
power), the log mirrored through a local file and the MirrorTailer, the unplug gap with its
backfill, and a phone reached over the network that answers with the cable out."""

from __future__ import annotations

import pytest

from anemon.clock import RealClock, VirtualClock
from anemon.control.plan import device_spec
from anemon.devices.base import DeviceGone, LaunchRefused
from anemon.devices.sim import SimDevice, make_device
from anemon.simulator import SimArmConfig, SimConfig, SimulatedIPhone
from anemon.sources.items import LogGap

BUNDLE = "com.example.bench"
ARM = "minicpm5_1b_ane_pal8"
LOG = "Documents/sustain/t.log"
ENV = {"AB_MODEL": ARM, "AB_TAG": "t", "AB_SECONDS": "60"}


def device(config: SimConfig | None = None, *, network: bool = False):
    clock = VirtualClock(limit_s=3600)
    phone = SimulatedIPhone(config or SimConfig())
    return SimDevice(phone, clock, bundle=BUNDLE, network=network), clock


def test_a_refusal_is_a_transient_launch_error_then_the_launch_works():
    config = SimConfig(arms={ARM: SimArmConfig(ARM, fault="refuse_launch", fault_count=1)})
    dev, clock = device(config)

    async def main():
        with pytest.raises(LaunchRefused) as e:
            await dev.launch(BUNDLE, ENV)
        assert e.value.transient and e.value.code == 10002
        pid = await dev.launch(BUNDLE, ENV)
        assert pid in dev.running()
        await dev.terminate(pid)
        assert not dev.running()

    clock.run(main())


def test_a_locked_phone_is_a_permanent_launch_error():
    dev, clock = device()
    dev.phone.set_locked(True)

    async def main():
        with pytest.raises(LaunchRefused) as e:
            await dev.launch(BUNDLE, ENV)
        assert not e.value.transient

    clock.run(main())


def test_telemetry_is_what_a_host_reads():
    dev, clock = device()
    t = clock.run(dev.telemetry())
    assert t is not None and t.plugged and t.free_gb == pytest.approx(38.0)
    assert not hasattr(t, "thermal")


def test_unplugged_there_is_no_telemetry_and_no_launch():
    dev, clock = device()
    dev.phone.set_plugged(False)

    async def main():
        assert await dev.telemetry() is None
        with pytest.raises(DeviceGone):
            await dev.launch(BUNDLE, ENV)

    clock.run(main())


def test_the_log_goes_through_the_mirror_and_unplugging_is_a_gap(tmp_path):
    unplug = SimArmConfig(ARM, fault="unplug", fault_at_s=20, unplug_s=100)
    dev, clock = device(SimConfig(arms={ARM: unplug}))
    mirror = tmp_path / "t.log"

    async def main():
        await dev.launch(BUNDLE, ENV)
        items = []
        async for batch in dev.follow_log(BUNDLE, LOG, mirror):
            items.extend(batch)
            if any(isinstance(i, str) and i.startswith("END") for i in items):
                return items
        return items

    items = clock.run(main())
    gaps = [i for i in items if isinstance(i, LogGap)]
    assert [g.state for g in gaps] == ["begin", "end"]
    lines = [i for i in items if isinstance(i, str)]
    assert lines[0].startswith("START") and lines[-1].startswith("END")
    assert mirror.read_text().splitlines() == lines  # every line exactly once
    after = items[items.index(gaps[1]) + 1 :]
    assert len(after) > 5  # what was written while unplugged, backfilled


def test_telemetry_reads_power_as_battery_current_times_voltage():
    dev, clock = device(SimConfig(plugged=False), network=True)

    async def main():
        await dev.launch(BUNDLE, ENV)
        await clock.sleep(20)  # decoding, cool: about the ANE's burst power
        unplugged = await dev.telemetry()
        dev.phone.set_plugged(True)
        plugged = await dev.telemetry()
        return unplugged, plugged

    unplugged, plugged = clock.run(main())
    assert unplugged is not None and not unplugged.plugged and not unplugged.charging
    assert unplugged.power_w == pytest.approx(dev.phone.power_w, rel=0.002)
    assert 4.0 < unplugged.power_w < 4.8
    assert unplugged.event(t=0, wall=0, source="s").power_w == unplugged.power_w
    # charging, the current is the charger's (positive), whatever the phone draws
    reading = dev.phone.telemetry()
    assert plugged is not None and plugged.charging and reading.amperage_ma > 0
    assert plugged.power_w == pytest.approx(
        reading.amperage_ma * reading.voltage_mv / 1e6, abs=1e-3
    )


def test_over_the_network_an_unplugged_phone_still_answers_and_follows(tmp_path):
    unplug = SimArmConfig(ARM, fault="unplug", fault_at_s=20, unplug_s=100)
    dev, clock = device(SimConfig(arms={ARM: unplug}), network=True)
    mirror = tmp_path / "t.log"

    async def main():
        await dev.launch(BUNDLE, ENV)
        items, readings = [], []
        async for batch in dev.follow_log(BUNDLE, LOG, mirror):
            items.extend(batch)
            readings.append(await dev.telemetry())
            if any(isinstance(i, str) and i.startswith("END") for i in items):
                break
        dev.phone.set_plugged(False)
        readings.append(await dev.telemetry())
        await dev.launch(BUNDLE, ENV)  # launches go over the network too
        return items, readings

    items, readings = clock.run(main())
    assert not any(isinstance(i, LogGap) for i in items)
    assert None not in readings
    assert any(r.plugged is False and r.power_w for r in readings)  # read with the cable out
    assert readings[-1].plugged is False


def test_a_plan_passes_power_w_and_the_network_connection():
    from tests.control.helpers import TWO_ARMS, plan

    arm_power = '[sim.arms.minicpm5_1b_gpu_int8]\nprofile = "minicpm5_1b_gpu_int8"\npower_w = 5.0'
    over_wifi = plan(TWO_ARMS, device='[device]\nconnect = "network"', sim=arm_power)
    dev = make_device(device_spec(over_wifi), RealClock())
    assert dev.network
    assert dev.phone.config.arms["minicpm5_1b_gpu_int8"].burst_w == 5.0
    assert dev.phone.config.arm(ARM) is not None and dev.phone.config.arm(ARM).burst_w == 4.5
    usb = make_device(device_spec(plan(TWO_ARMS)), RealClock())
    assert not usb.network
