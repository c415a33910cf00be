"""DVT on the virtual iPhone (an iOS 16 phone, the lockdown service), with the real
pymobiledevice3 client on the other side: the handshake, channels, process control."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import struct
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anemon.devices.base import LaunchRefused
from anemon.devices.pmd3 import Pmd3Device
from anemon.devices.virtual import VirtualIPhone
from anemon.devices.virtual.ticker import advance
from anemon.simulator import SimArmConfig, SimConfig, SimulatedIPhone
from tests.devices.helpers import BUNDLE, LOG

TIMEOUT_S = 20
ARM = "minicpm5_1b_ane_pal8"
ENV = {"AB_MODEL": ARM, "AB_MODE": "ab", "AB_TRIALS": "2"}


def make_sim(**arms: SimArmConfig) -> SimulatedIPhone:
    return SimulatedIPhone(SimConfig(arms=arms))


@pytest.fixture
def sim() -> SimulatedIPhone:
    return make_sim()


@asynccontextmanager
async def running_ios16(
    sim: SimulatedIPhone, monkeypatch: pytest.MonkeyPatch, **settings: Any
) -> AsyncIterator[VirtualIPhone]:
    """An iOS 16 phone with the developer disk image mounted, USBMUXD_SOCKET_ADDRESS pointing
    at it; its time runs 20x."""
    phone = VirtualIPhone(sim, bundles=[BUNDLE], product_version="16.7.10",
                          developer_image=True, console_poll_s=0.02, **settings)  # fmt: skip
    async with phone:
        monkeypatch.setenv("USBMUXD_SOCKET_ADDRESS", phone.usbmux_address)
        ticker = asyncio.create_task(advance([sim], speed=20.0, tick_s=0.02))
        yield phone
        ticker.cancel()
        await asyncio.gather(ticker, return_exceptions=True)


@asynccontextmanager
async def connected(tmp_path: Path) -> AsyncIterator[Any]:
    """A lockdown client of the phone USBMUXD_SOCKET_ADDRESS points at."""
    device = Pmd3Device(pairing_records_cache_folder=tmp_path / "pair")
    yield await device.connection.lockdown()
    await device.close()


@pytest.fixture
async def ios16(
    sim: SimulatedIPhone, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[VirtualIPhone]:
    async with running_ios16(sim, monkeypatch) as phone:
        yield phone


@pytest.fixture
async def lockdown(ios16: VirtualIPhone, tmp_path: Path) -> AsyncIterator[Any]:
    async with connected(tmp_path) as client:
        yield client


async def test_launch_output_kill_and_termination_through_the_real_client(
    lockdown: Any, sim: SimulatedIPhone, caplog: pytest.LogCaptureFixture
) -> None:
    from pymobiledevice3.services.dvt.instruments.dvt_provider import DvtProvider
    from pymobiledevice3.services.dvt.instruments.process_control import ProcessControl

    caplog.set_level(logging.WARNING, "pymobiledevice3")
    async with asyncio.timeout(TIMEOUT_S), DvtProvider(lockdown) as provider:
        assert "com.apple.instruments.server.services.processcontrol" in (
            provider.dtx.supported_identifiers or {}
        )
        async with ProcessControl(provider) as pc:
            pid = await pc.launch(BUNDLE, environment=dict(ENV))
            assert pid in sim.running()
            assert await pc.process_identifier_for_bundle_identifier(BUNDLE) == pid
            events = aiter(pc)
            first = await anext(events)  # the app's first log line, as its output
            assert first.pid == pid and first.message.startswith("START")
            assert first.date is not None
            await pc.kill(pid)
            assert pid not in sim.running()
            assert await pc.process_identifier_for_bundle_identifier(BUNDLE) == 0
            await wait_for(lambda: "terminated with exit code None or crashing signal 9"
                           in caplog.text)  # fmt: skip
    assert sim.container_files(BUNDLE)[LOG].startswith(b"START")


async def test_an_app_that_ends_by_itself_reports_exit_code_0(
    lockdown: Any, sim: SimulatedIPhone, caplog: pytest.LogCaptureFixture
) -> None:

    caplog.set_level(logging.WARNING, "pymobiledevice3")
    env = {"AB_MODE": "idle", "AB_SECONDS": "x"}  # the app complains and ends at once
    async with asyncio.timeout(TIMEOUT_S), process_control(lockdown) as pc:
        pid = await pc.launch(BUNDLE, environment=env)
        lines = [event.message async for event in until_end(pc)]
        await wait_for(lambda: f"PID {pid} terminated with exit code 0" in caplog.text)
    assert lines[-1].startswith("END")


async def until_end(pc: Any) -> AsyncIterator[Any]:
    async for event in pc:
        yield event
        if event.message.startswith("END"):
            return


async def test_anemon_launches_and_kills_over_one_dvt_connection(
    ios16: VirtualIPhone, sim: SimulatedIPhone, tmp_path: Path
) -> None:
    device = Pmd3Device(pairing_records_cache_folder=tmp_path / "pair")
    async with asyncio.timeout(TIMEOUT_S):
        pid = await device.launch(BUNDLE, ENV)
        assert sim.running() == {pid}
        again = await device.launch(BUNDLE, ENV)  # replaces the first
        assert sim.running() == {again} and again != pid
        await device.terminate(again)
        assert sim.running() == set()
        await device.close()
    assert ios16.service_starts["com.apple.instruments.remoteserver.DVTSecureSocketProxy"] == 1


@pytest.mark.parametrize(
    ("arm", "wanted"),
    [
        (SimArmConfig(profile=ARM, fault="busy", fault_at_s=600), "Busy"),
        (SimArmConfig(profile=ARM, fault="refuse_launch"), "couldn’t be completed"),
    ],
)
async def test_a_refused_launch_then_an_accepted_one(
    arm: SimArmConfig, wanted: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    sim = make_sim(**{ARM: arm})
    phone = VirtualIPhone(sim, bundles=[BUNDLE], product_version="16.7.10", developer_image=True)
    async with phone, asyncio.timeout(TIMEOUT_S):
        monkeypatch.setenv("USBMUXD_SOCKET_ADDRESS", phone.usbmux_address)
        device = Pmd3Device(pairing_records_cache_folder=tmp_path / "pair")
        with pytest.raises(LaunchRefused) as refused:
            await device.launch(BUNDLE, ENV)
        assert wanted in str(refused.value)
        assert "Request to launch com.example.bench failed" in str(refused.value)
        sim.advance(601)
        assert await device.launch(BUNDLE, ENV) in sim.running()
        await device.close()


async def test_a_locked_phone_refuses_and_an_unknown_app_is_not_found(
    ios16: VirtualIPhone, sim: SimulatedIPhone, tmp_path: Path
) -> None:
    sim.set_locked(True)
    device = Pmd3Device(pairing_records_cache_folder=tmp_path / "pair")
    async with asyncio.timeout(TIMEOUT_S):
        with pytest.raises(LaunchRefused, match="could not be, unlocked"):
            await device.launch(BUNDLE, ENV)
        with pytest.raises(LaunchRefused, match="returned nil"):
            await device.launch("com.example.other", ENV)
        await device.close()
    assert sim.running() == set()


async def test_an_unknown_channel_is_refused_and_the_connection_goes_on(lockdown: Any) -> None:
    from pymobiledevice3.dtx.exceptions import DTXNsError
    from pymobiledevice3.services.dvt.instruments.dvt_provider import DvtProvider
    from pymobiledevice3.services.dvt.instruments.process_control import ProcessControl

    async with asyncio.timeout(TIMEOUT_S), DvtProvider(lockdown) as provider:
        with pytest.raises(DTXNsError, match="not available"):
            await provider.dtx.open_channel("com.apple.instruments.server.services.nothing")
        async with ProcessControl(provider) as pc:
            assert await pc.process_identifier_for_bundle_identifier(BUNDLE) == 0


async def test_an_unreadable_call_is_counted_answered_and_survived(
    ios16: VirtualIPhone, lockdown: Any, caplog: pytest.LogCaptureFixture
) -> None:
    from pymobiledevice3.dtx.exceptions import DTXNsError
    from pymobiledevice3.exceptions import UnrecognizedSelectorError

    assert ios16.instruments is not None
    async with asyncio.timeout(TIMEOUT_S), process_control(lockdown) as pc:
        with pytest.raises(DTXNsError, match="arguments"):
            await pc.service.invoke("sendSignal:toPid:", 9)  # one argument short
        with pytest.raises(UnrecognizedSelectorError):
            await pc.service.invoke("noSuchSelector")
        assert await pc.process_identifier_for_bundle_identifier(BUNDLE) == 0
    assert ios16.instruments.stats.malformed == 1
    assert "an unreadable message" in caplog.text and "Traceback" not in caplog.text


async def test_without_the_disk_image_there_is_no_dvt(
    sim: SimulatedIPhone, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from pymobiledevice3.exceptions import InvalidServiceError

    phone = VirtualIPhone(sim, bundles=[BUNDLE], product_version="16.7.10")
    async with phone, asyncio.timeout(TIMEOUT_S):
        monkeypatch.setenv("USBMUXD_SOCKET_ADDRESS", phone.usbmux_address)
        device = Pmd3Device(pairing_records_cache_folder=tmp_path / "pair")
        lockdown = await device.connection.lockdown()
        with pytest.raises(InvalidServiceError):
            await lockdown.start_lockdown_service(
                "com.apple.instruments.remoteserver.DVTSecureSocketProxy"
            )
        await device.close()


@asynccontextmanager
async def process_control(lockdown: Any) -> AsyncIterator[Any]:
    """The real client's process control over DVT."""
    from pymobiledevice3.services.dvt.instruments.dvt_provider import DvtProvider
    from pymobiledevice3.services.dvt.instruments.process_control import ProcessControl

    async with DvtProvider(lockdown) as provider, ProcessControl(provider) as pc:
        yield pc


async def wait_for(condition: Any) -> None:
    while not condition():
        await asyncio.sleep(0.01)


async def test_a_message_past_one_fragment_is_split_and_read_back() -> None:
    from pymobiledevice3.dtx.fragment import DTXFragment
    from pymobiledevice3.dtx.fragmenter import DTXFragmenter
    from pymobiledevice3.dtx.message import DTXMessage

    from anemon.devices.virtual.dvt.wire import MAX_FRAGMENT_BODY, Frame, Kind, encode, read_message

    rows = [{"Processes": {n: [f"row {n} " * 10]}} for n in range(3000)]  # past one fragment
    data = encode(Kind.OBJECT, Frame(7, 0, -1, False), rows, ("an argument",))
    assert len(data) > 2 * MAX_FRAGMENT_BODY
    ours, theirs = asyncio.StreamReader(), asyncio.StreamReader()
    for reader in (ours, theirs):
        reader.feed_data(data)
        reader.feed_eof()
    message = await read_message(ours)
    assert message.frame.identifier == 7 and message.arguments() == ["an argument"]
    first = await DTXFragment.read(theirs)  # the client's own reassembly
    fragmenter = DTXFragmenter(first, 0, 1 << 30)
    while not fragmenter.add(await DTXFragment.read(theirs)):
        pass
    raw, meta = fragmenter.assemble()
    assert DTXMessage.parse(meta, raw).payload == rows


async def test_a_broken_frame_drops_that_connection_only(
    ios16: VirtualIPhone, lockdown: Any
) -> None:
    from pymobiledevice3.services.dvt.instruments.dvt_provider import DvtProvider

    async with asyncio.timeout(TIMEOUT_S):
        service = await lockdown.start_lockdown_service(DvtProvider.SERVICE_NAME)
        service.writer.write(b"\x00" * 64)  # no DTX magic
        await service.writer.drain()
        assert await service.reader.read() != b""  # the capabilities came first
        assert await service.reader.read() == b""  # then the phone hung up
        await service.close()
        async with process_control(lockdown) as pc:
            assert await pc.process_identifier_for_bundle_identifier(BUNDLE) == 0
    assert ios16.instruments is not None and ios16.instruments.stats.broken == 1


async def test_an_ios17_phone_has_instruments_but_no_dvt_over_lockdown(
    sim: SimulatedIPhone, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """From iOS 17 DVT is reached through an RSD tunnel only: the instruments are there for
    it (`phone.instruments.serve`), lockdown refuses the service."""
    from pymobiledevice3.exceptions import InvalidServiceError

    phone = VirtualIPhone(sim, bundles=[BUNDLE], product_version="17.5", developer_image=True)
    assert phone.instruments is not None
    async with phone, asyncio.timeout(TIMEOUT_S):
        monkeypatch.setenv("USBMUXD_SOCKET_ADDRESS", phone.usbmux_address)
        async with connected(tmp_path) as lockdown:
            with pytest.raises(InvalidServiceError):
                await lockdown.start_lockdown_service(
                    "com.apple.instruments.remoteserver.DVTSecureSocketProxy"
                )


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300), st.binary(max_size=300))
def test_any_aux_or_payload_is_read_or_called_malformed(aux: bytes, payload: bytes) -> None:
    """What the host sends inside a well-framed message: its arguments and its selector are
    read, or Malformed (a counted warning), never another exception."""
    from anemon.devices.virtual.dvt.wire import AUX_DICT, Frame, Malformed, Message

    framed = struct.pack("<IIQ", AUX_DICT, 0, len(aux)) + aux
    for raw in (aux, framed):
        message = Message(Frame(1, 0, 1, True), 2, raw, payload)
        for read in (message.arguments, message.selector):
            with contextlib.suppress(Malformed):
                read()


MAGIC_AND_SIZE = struct.pack("<II", 0x1F3D5B79, 32)
"""The start of a fragment header: past it, the random bytes reach every later check."""


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.binary(max_size=200), st.binary(max_size=200).map(MAGIC_AND_SIZE.__add__)))
def test_any_byte_stream_is_read_or_refused_as_a_protocol_violation(data: bytes) -> None:
    from anemon.devices.virtual.dvt.wire import read_message
    from anemon.devices.virtual.plist_io import ProtocolViolation

    async def read_all() -> None:
        reader = asyncio.StreamReader()
        reader.feed_data(data)
        reader.feed_eof()
        with contextlib.suppress(ProtocolViolation, asyncio.IncompleteReadError):
            while True:
                await read_message(reader)

    asyncio.run(read_all())
