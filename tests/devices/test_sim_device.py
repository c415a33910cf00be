"""The sim Device: refusals typed like a real device's, telemetry without thermal (with device
power), the log mirrored through a local file and the MirrorTailer, the unplug gap with its
backfill, and a phone reached over the network that answers with the cable out."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from anemon.clock import RealClock, VirtualClock
from anemon.control.plan import device_spec
from anemon.devices.base import (
    AppCrash,
    AppExit,
    AppGap,
    AppNews,
    AppSample,
    AppWatcher,
    DeviceGone,
    LaunchRefused,
)
from anemon.devices.sim import SimDevice, make_device
from anemon.devices.sim.watch import STREAMS
from anemon.simulator import SimArmConfig, SimConfig, SimulatedIPhone
from anemon.simulator.phone import CRASH_REPORTER
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


# -- the watch (AppWatcher) ---------------------------------------------------------------------


def jetsammed(**kw: object) -> tuple[SimDevice, VirtualClock]:
    return device(SimConfig(arms={ARM: SimArmConfig(ARM, fault="jetsam", fault_at_s=20)}), **kw)


async def watch_until_exit(
    dev: SimDevice, clock: VirtualClock
) -> tuple[int, list[tuple[float, AppNews]]]:
    """Launch the app and read the watch until its exit; the pid and what came when."""
    news = dev.watch(BUNDLE)
    pid = await dev.launch(BUNDLE, ENV)
    seen: list[tuple[float, AppNews]] = []
    async with asyncio.timeout(600):  # virtual seconds
        async for item in news:
            seen.append((clock.now(), item))
            if isinstance(item, AppExit):
                break
    await news.aclose()
    return pid, seen


def test_the_watch_samples_the_app_then_sees_its_jetsam_report_and_its_exit():
    dev, clock = jetsammed()
    pid, seen = clock.run(watch_until_exit(dev, clock))
    assert isinstance(dev, AppWatcher)
    samples = [(t, s) for t, s in seen if isinstance(s, AppSample)]
    assert len(samples) > 20 and all(s.pid == pid for _, s in samples)
    assert all(t2 - t1 == pytest.approx(1.0) for (t1, _), (t2, _) in itertools.pairwise(samples))
    footprints = [s.mem_gb for _, s in samples]
    assert footprints[0] < 2.0 and 3.0 < max(footprints) < 3.4  # the arm loaded, then a leak
    assert all(s.cpu_pct is not None and s.gpu_pct is not None for _, s in samples)
    [(t_crash, crash)] = [(t, c) for t, c in seen if isinstance(c, AppCrash)]
    t_exit, ended = seen[-1]
    assert (crash.report, crash.pid, crash.process) == ("jetsam", pid, "BenchApp")
    assert crash.file.startswith("JetsamEvent-") and crash.data.startswith(b'{"bug_type": "298"')
    assert crash.reason.startswith("jetsam: per-process-limit at 3.")
    assert ended == AppExit(pid, "exited on signal 9") and t_exit == t_crash
    assert dev.watch_warnings == 0


def test_the_watch_tells_a_host_kill_and_only_new_reports():
    dev, clock = device()
    dev.phone._containers.append(CRASH_REPORTER, "old.ips", b"not json")  # before the watch

    async def main() -> list[AppNews]:
        news = dev.watch(BUNDLE)
        pid = await dev.launch(BUNDLE, ENV)
        await clock.sleep(5)
        dev.phone._containers.append(CRASH_REPORTER, "new.ips", b"not json either")
        await dev.terminate(pid)
        seen: list[AppNews] = []
        async with asyncio.timeout(60):
            async for item in news:
                seen.append(item)
                if isinstance(item, AppExit):
                    break
        await news.aclose()
        return seen

    seen = clock.run(main())
    assert isinstance(seen[-1], AppExit) and seen[-1].reason == "exited on signal 9"
    assert not any(isinstance(s, AppCrash) for s in seen)
    assert dev.watch_warnings == 1  # the new report, unreadable: counted, not news


def test_unplugged_the_watch_is_a_gap_and_the_exit_comes_once_the_phone_is_back():
    dev, clock = device()

    async def main() -> list[AppNews]:
        news = dev.watch(BUNDLE)
        pid = await dev.launch(BUNDLE, ENV)
        await clock.sleep(2.5)
        dev.phone.set_plugged(False)
        dev.phone.terminate(pid)
        seen: list[AppNews] = []
        async with asyncio.timeout(60):
            while not isinstance(item := await anext(news), AppGap):
                pass
            seen.append(item)
            await clock.sleep(10)
            dev.phone.set_plugged(True)
            while not isinstance(item := await anext(news), AppExit):
                seen.append(item)
            seen.append(item)
        await news.aclose()
        return seen

    seen = clock.run(main())
    gaps = [(g.stream, g.state) for g in seen if isinstance(g, AppGap)]
    assert gaps[0] == ("exits", "begin") and ("exits", "end") in gaps
    assert {s for s, state in gaps if state == "begin"} == set(STREAMS)
    assert not any(isinstance(s, AppSample) for s in seen)
    assert isinstance(seen[-1], AppExit) and seen[-1].reason == "exited on signal 9"


def test_a_plans_process_s_paces_the_watch_in_session_time():
    from tests.control.helpers import TWO_ARMS, plan

    clock = VirtualClock(limit_s=3600)
    dev = make_device(device_spec(plan(TWO_ARMS, device="[device]\nprocess_s = 2.5")), clock)

    async def main() -> list[float]:
        news = dev.watch(dev.bundle)
        await dev.launch(dev.bundle, ENV)
        times = []
        async with asyncio.timeout(60):
            async for item in news:
                if isinstance(item, AppSample):
                    times.append(clock.now())
                if len(times) == 4:
                    break
        await news.aclose()
        return times

    assert clock.run(main()) == [2.5, 5.0, 7.5, 10.0]
