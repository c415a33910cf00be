"""The sim Device: refusals typed like a real device's, telemetry without thermal, the log
mirrored through a local file and the MirrorTailer, and the unplug gap with its backfill."""

from __future__ import annotations

import pytest

from anemon.clock import VirtualClock
from anemon.devices.base import DeviceGone, LaunchRefused
from anemon.devices.sim import SimDevice
from anemon.simulator import SimArmConfig, SimConfig, SimulatedIPhone
from anemon.sources.items import LogGap

BUNDLE = "com.example.bench"
ARM = "minicpm5_1b_ane_pal8"
LOG = "Documents/sustain/t.log"
ENV = {"AB_MODEL": ARM, "AB_TAG": "t", "AB_SECONDS": "60"}


def device(config: SimConfig | None = None):
    clock = VirtualClock(limit_s=3600)
    return SimDevice(SimulatedIPhone(config or SimConfig()), clock, bundle=BUNDLE), clock


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
