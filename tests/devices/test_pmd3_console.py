"""The app's console lines: the real os_trace client, through Pmd3Device.console(), against the
virtual iPhone's os_trace_relay (which logs each new line of the bench log as "BenchApp")."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from anemon.devices.base import DeviceGone
from anemon.devices.pmd3 import Pmd3Device
from anemon.devices.pmd3.console import message_lines
from anemon.devices.pmd3.errors import NoDevice
from anemon.devices.virtual import VirtualIPhone
from tests.devices.helpers import BUNDLE, StandInPhone

TIMEOUT_S = 15
APP = "BenchApp"


async def started(phone: VirtualIPhone, console: AsyncIterator[str]) -> asyncio.Future[str]:
    """The console's first line, pending; returns once the phone streams to it."""
    first = asyncio.ensure_future(anext(console))
    await phone.os_trace.wait_streams(1)
    return first


async def take(console: AsyncIterator[str], count: int) -> list[str]:
    return [await anext(console) for _ in range(count)]


async def test_bench_lines_arrive_once_in_order_while_the_log_grows(
    phone: VirtualIPhone, pmd3: Pmd3Device, stand_in: StandInPhone
) -> None:
    stand_in.append("START arm=old\nTRIAL arm=a tri")  # before the stream: START is never seen
    console = pmd3.console(APP)
    async with asyncio.timeout(TIMEOUT_S):
        try:
            first = await started(phone, console)
            stand_in.append("al=1\nTRIAL arm=a trial=2\n")
            seen = [await first] + await take(console, 1)
            stand_in.append("TRIAL arm=a trial=3\nEND arm=")
            seen += await take(console, 1)
            stand_in.append("a\n")
            seen += await take(console, 1)
        finally:
            await console.aclose()
            await pmd3.close()
        await phone.os_trace.wait_streams(0)  # the consumer stopping hung the stream up
    # Each line is also on the wire from SpringBoard: a duplicate would have taken a place here.
    assert seen == [
        "TRIAL arm=a trial=1",
        "TRIAL arm=a trial=2",
        "TRIAL arm=a trial=3",
        "END arm=a",
    ]


async def test_other_processes_are_on_the_wire_but_filtered_out(
    phone: VirtualIPhone, pmd3: Pmd3Device, stand_in: StandInPhone
) -> None:
    from pymobiledevice3.services.os_trace import OsTraceService

    async with asyncio.timeout(TIMEOUT_S):
        service = OsTraceService(await pmd3.connection.lockdown())
        entries = service.syslog(pid=-1)
        try:
            hello = await anext(entries)
            stand_in.append("TRIAL n=1\n")
            raw = [hello, await anext(entries), await anext(entries)]
        finally:
            await entries.aclose()
            await service.close()
            await pmd3.close()
    assert [(e.filename.rsplit("/", 1)[-1], e.message) for e in raw] == [
        ("SpringBoard", "console stream started"),
        (APP, "TRIAL n=1"),
        ("SpringBoard", "TRIAL n=1"),
    ]
    assert raw[1].label is not None and raw[1].label.subsystem == "com.example.bench"


async def test_an_unplug_ends_the_stream_with_device_gone(
    phone: VirtualIPhone, pmd3: Pmd3Device, stand_in: StandInPhone
) -> None:
    console = pmd3.console(APP)
    async with asyncio.timeout(TIMEOUT_S):
        try:
            first = await started(phone, console)
            stand_in.append("TRIAL n=1\n")
            assert await first == "TRIAL n=1"
            phone.detach()
            with pytest.raises(DeviceGone) as gone:
                await anext(console)
            with pytest.raises(StopAsyncIteration):
                await anext(console)  # ended, not resumable
        finally:
            await console.aclose()
            await pmd3.close()
    assert str(gone.value) == (
        "the iPhone went away (unplugged?): the console stream of BenchApp ended "
        "(lines logged meanwhile are lost)"
    )
    assert gone.value.transient


async def test_no_phone_attached_is_no_device(phone: VirtualIPhone, pmd3: Pmd3Device) -> None:
    phone.detach()
    console = pmd3.console(APP)
    async with asyncio.timeout(TIMEOUT_S):
        try:
            with pytest.raises(NoDevice):
                await anext(console)
        finally:
            await console.aclose()
            await pmd3.close()


async def test_the_pid_list_names_the_app(phone: VirtualIPhone, pmd3: Pmd3Device) -> None:
    from pymobiledevice3.services.os_trace import OsTraceService

    async with asyncio.timeout(TIMEOUT_S):
        async with OsTraceService(await pmd3.connection.lockdown()) as service:
            pids = await service.get_pid_list()
        await pmd3.close()
    names = {p["ProcessName"] for p in pids["Payload"].values()}
    assert names == {APP, "SpringBoard"}


@pytest.mark.parametrize(
    ("message", "lines"),
    [("TRIAL n=1", ["TRIAL n=1"]), ("A\nB\n", ["A", "B"]), ("", [""])],
)
def test_a_message_is_split_into_lines(message: str, lines: list[str]) -> None:
    assert message_lines(message) == lines


async def test_the_simulated_phone_logs_its_bench_lines(
    pmd3: Pmd3Device, monkeypatch: pytest.MonkeyPatch
) -> None:
    from anemon.simulator import SimConfig, SimulatedIPhone

    sim = SimulatedIPhone(SimConfig())
    sim.launch(BUNDLE, {"AB_MODEL": "minicpm5_1b_ane_pal8"})  # writes Documents/sustain/bench.log
    async with VirtualIPhone(sim, bundles=[BUNDLE]) as phone:
        monkeypatch.setenv("USBMUXD_SOCKET_ADDRESS", phone.usbmux_address)
        console = pmd3.console(APP)
        async with asyncio.timeout(TIMEOUT_S):
            try:
                first = await started(phone, console)
                sim.advance(60)
                lines = [await first] + await take(console, 2)
            finally:
                await console.aclose()
                await pmd3.close()
    assert [line.split()[0] for line in lines] == ["START", "LOAD", "TRIAL"]
