"""The virtual iPhone's other instruments with the real pymobiledevice3 client: device info and
sysmontap (the app's CPU and memory), graphics (the GPU), the condition inducer (a forced
thermal state), and the crash report services with the os_trace line that announces a report."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from anemon.devices.virtual import VirtualIPhone
from anemon.simulator import SimArmConfig, SimConfig, SimulatedIPhone
from tests.devices.helpers import BUNDLE
from tests.devices.test_virtual_dvt import connected, running_ios16, wait_for

TIMEOUT_S = 20
ANE = "minicpm5_1b_ane_pal8"
GPU = "minicpm5_1b_gpu_int8"
GB = 1_000_000_000


def sustain(model: str) -> dict[str, str]:
    return {"AB_MODEL": model, "AB_MODE": "sustain", "AB_SECONDS": "600"}


@pytest.fixture
def sim() -> SimulatedIPhone:
    jetsam = SimArmConfig(profile=ANE, fault="jetsam", fault_at_s=5)
    return SimulatedIPhone(SimConfig(arms={"leaky": jetsam}))


@pytest.fixture
async def phone(
    sim: SimulatedIPhone, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[VirtualIPhone]:
    """Graphics at 20 Hz."""
    async with running_ios16(sim, monkeypatch, graphics_s=0.05) as virtual:
        yield virtual


@pytest.fixture
async def lockdown(phone: VirtualIPhone, tmp_path: Path) -> AsyncIterator[Any]:
    async with connected(tmp_path) as client:
        yield client


@pytest.fixture
async def dvt(lockdown: Any) -> AsyncIterator[Any]:
    from pymobiledevice3.services.dvt.instruments.dvt_provider import DvtProvider

    async with DvtProvider(lockdown) as provider:
        yield provider


async def launch(dvt: Any, env: dict[str, str]) -> int:
    from pymobiledevice3.services.dvt.instruments.process_control import ProcessControl

    async with ProcessControl(dvt) as pc:
        return int(await pc.launch(BUNDLE, environment=env))


async def test_sysmontap_rows_carry_the_app_and_the_system(dvt: Any, sim: SimulatedIPhone) -> None:
    from pymobiledevice3.services.dvt.instruments.sysmontap import Sysmontap

    async with asyncio.timeout(TIMEOUT_S):
        pid = await launch(dvt, sustain(ANE))
        tap = await Sysmontap.create(dvt, interval=20)
        assert tap.process_attributes_cls.__name__ == "SysmonProcessAttributes"
        async with tap:
            samples = []
            async for entries in tap.iter_processes():
                samples.append({e["pid"]: e for e in entries})
                if len(samples) == 3 and samples[-1][pid]["physFootprint"] > 1.8 * GB:
                    break
                if len(samples) == 3:
                    samples.pop(1)  # wait for the model to be mapped
    first, last = samples[0], samples[-1]
    assert first[pid]["cpuUsage"] is None and first[61]["cpuUsage"] is None  # no interval yet
    assert last[pid]["name"] == "BenchApp" and last[61]["name"] == "SpringBoard"
    assert isinstance(last[pid]["cpuUsage"], float) and 0 < last[pid]["cpuUsage"] <= 100
    assert 1.8 * GB < last[pid]["physFootprint"] < 2.0 * GB


async def test_a_flaky_phone_withholds_rows_and_sends_absurd_values(
    phone: VirtualIPhone, dvt: Any
) -> None:
    from pymobiledevice3.services.dvt.instruments.sysmontap import Sysmontap

    assert phone.instruments is not None
    misbehaving = phone.instruments.misbehaving
    async with asyncio.timeout(TIMEOUT_S):
        pid = await launch(dvt, sustain(ANE))
        async with await Sysmontap.create(dvt, interval=20) as tap:
            rows = tap.iter_processes()
            await anext(rows)
            misbehaving.silent = True
            await wait_for(lambda: misbehaving.withheld >= 5)
            misbehaving.silent, misbehaving.absurd = False, 1
            async for entries in rows:  # past the rows sent before the silence
                spoiled = {e["pid"]: e for e in entries}
                if spoiled[pid]["cpuUsage"] == 1e6:
                    break
            sound = {e["pid"]: e for e in await anext(rows)}
    assert (spoiled[pid]["cpuUsage"], spoiled[pid]["physFootprint"]) == (1e6, -4096)
    assert spoiled[61]["physFootprint"] > 0 and sound[pid]["physFootprint"] > 0


class RecordingChannel:
    """A channel that records what a service sends and how often it asks to."""

    def __init__(self) -> None:
        self.sent: list[Any] = []
        self.periods: list[float] = []

    def send(self, value: Any) -> None:
        self.sent.append(value)

    def every(self, period_s: float, send: Any) -> None:
        self.periods.append(period_s)
        send()

    def quiet(self) -> None:
        pass


@pytest.mark.parametrize(("floor_s", "period_s"), [(0.0, 0.01), (4.0, 4.0)])
async def test_a_slow_phone_sends_rows_no_faster_than_its_floor(
    sim: SimulatedIPhone, floor_s: float, period_s: float
) -> None:
    """iOS 17+ phones send a row every 3-5 s whatever the host asks (`ur` 10 ms here)."""
    from anemon.devices.virtual.dvt.sysmontap import Misbehaviour, Sysmontap

    channel = RecordingChannel()
    tap = Sysmontap(channel, sim, lambda: 0.0, Misbehaviour(floor_s=floor_s))  # type: ignore[arg-type]
    await tap.call("setConfig:", [{"ur": 10, "procAttrs": ["pid"], "sysAttrs": []}])
    await tap.call("start", [])
    assert channel.periods == [period_s]
    assert len(channel.sent) == 2  # the message the client drops, then the first rows


async def test_graphics_shows_the_gpu_busy_for_a_gpu_arm_only(dvt: Any) -> None:
    from pymobiledevice3.services.dvt.instruments.graphics import Graphics

    async def utilisation(model: str) -> int:
        await launch(dvt, sustain(model))
        async with Graphics(dvt) as graphics:
            async for sample in graphics:
                if sample["Device Utilization %"] > 10 or model == ANE:
                    assert sample["CoreAnimationFramesPerSecond"] == 60
                    return int(sample["Device Utilization %"])
        raise AssertionError("no sample")

    async with asyncio.timeout(TIMEOUT_S):
        assert await utilisation(GPU) > 80
        assert await utilisation(ANE) < 10  # its launch ended the GPU arm's app


async def test_a_thermal_condition_is_forced_refused_twice_and_cleared(
    phone: VirtualIPhone, dvt: Any, sim: SimulatedIPhone
) -> None:
    from pymobiledevice3.dtx.exceptions import DTXNsError
    from pymobiledevice3.services.dvt.instruments.condition_inducer import ConditionInducer

    assert phone.instruments is not None
    conditions = phone.instruments.conditions
    async with asyncio.timeout(TIMEOUT_S):
        inducer = ConditionInducer(dvt)
        await inducer.connect()
        groups = {g["identifier"]: g for g in await inducer.list()}
        assert [p["identifier"] for p in groups["ThermalCondition"]["profiles"]] == [
            "ThermalFair", "ThermalSerious", "ThermalCritical"]  # fmt: skip
        assert len(groups) >= 2 and not any(g["isActive"] for g in groups.values())
        await inducer.set("ThermalSerious")
        assert sim.thermal_state == 2 and sim.thermal.state == 0  # forced, not hot
        assert conditions.profile == "ThermalSerious"
        assert {g["identifier"]: g["activeProfile"] for g in await inducer.list()}[
            "ThermalCondition"] == "ThermalSerious"  # fmt: skip
        with pytest.raises(DTXNsError) as twice:
            await inducer.set("SlowNetwork3GGood")
        assert twice.value.error.code == 3
        await inducer.clear()
        await wait_for(lambda: conditions.profile == "")
        assert sim.thermal_state == 0


async def test_the_condition_ends_with_the_connection_that_set_it(
    phone: VirtualIPhone, lockdown: Any, sim: SimulatedIPhone
) -> None:
    from pymobiledevice3.services.dvt.instruments.condition_inducer import ConditionInducer
    from pymobiledevice3.services.dvt.instruments.dvt_provider import DvtProvider

    assert phone.instruments is not None
    async with asyncio.timeout(TIMEOUT_S):
        async with DvtProvider(lockdown) as holder:
            inducer = ConditionInducer(holder)
            await inducer.connect()
            await inducer.set("ThermalCritical")
            async with DvtProvider(lockdown) as other:  # another connection closing: no effect
                await ConditionInducer(other).connect()
            assert phone.instruments.conditions.profile == "ThermalCritical"
            pid = await launch(holder, sustain(ANE))
            await wait_for(lambda: b"thermal=critical" in sim.container_files(BUNDLE).get(
                "Documents/sustain/bench.log", b""))  # fmt: skip
        await wait_for(lambda: phone.instruments is not None
                       and phone.instruments.conditions.profile == "")  # fmt: skip
    assert sim.thermal_state == 0 and pid in sim.running()


async def test_a_jetsam_report_is_announced_listed_and_read(
    lockdown: Any, dvt: Any, sim: SimulatedIPhone
) -> None:
    """What `CrashReportsManager.watch()` waits for, read as it reads it (watch itself leaks
    its os_trace connection, so the test opens and closes its own)."""
    from pymobiledevice3.services.crash_reports import CrashReportsManager
    from pymobiledevice3.services.os_trace import OsTraceService

    async with asyncio.timeout(TIMEOUT_S), CrashReportsManager(lockdown) as reports:
        assert await reports.ls("/") == []
        mover = await lockdown.start_lockdown_service(reports.crash_mover_service_name)
        assert await mover.recvall(5) == b"ping\0"  # what flush() waits for (it leaks the socket)
        await mover.close()
        async with OsTraceService(lockdown=lockdown) as trace:
            entries = aiter(trace.syslog())
            await anext(entries)  # the stream is live from here on
            pid = await launch(dvt, {**sustain(ANE), "AB_ARM": "leaky"})
            entry = await anext(e async for e in entries if e.message.startswith("Saved type "))
        assert (Path(entry.filename).name, Path(entry.image_name).name) == (
            "osanalyticshelper", "OSAnalytics")  # fmt: skip
        name = Path(entry.message.split()[-1]).name
        assert await reports.ls("/") == [f"/{name}"] and name.startswith("JetsamEvent-")
        report = await reports.parse(name)
        data = await reports.afc.get_file_contents(name)
    assert report.bug_type.value == "298"
    body = json.loads(data.decode().partition("\n")[2])
    [app] = [p for p in body["processes"] if p["pid"] == pid]
    assert app["reason"] == "per-process-limit" and pid not in sim.running()


async def test_a_waived_memory_limit_spares_the_app_a_jetsam(
    dvt: Any, sim: SimulatedIPhone
) -> None:
    from pymobiledevice3.exceptions import DisableMemoryLimitError
    from pymobiledevice3.services.dvt.instruments.process_control import ProcessControl

    async with asyncio.timeout(TIMEOUT_S), ProcessControl(dvt) as pc:
        pid = int(await pc.launch(BUNDLE, environment={**sustain(ANE), "AB_ARM": "leaky"}))
        await pc.disable_memory_limit_for_pid(pid)
        with pytest.raises(DisableMemoryLimitError):
            await pc.disable_memory_limit_for_pid(pid + 1000)  # no such process
        await wait_for(lambda: next(u for u in sim.usage() if u.pid == pid).footprint_bytes
                       > 3.5 * GB)  # fmt: skip
        sim.advance(5)
        assert pid in sim.running() and sim.exit_of(pid) is None
