"""The pymobiledevice3 backend, with the real client, against the virtual iPhone on loopback."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from anemon.devices.base import DeviceGone, Telemetry
from anemon.devices.pmd3 import Pmd3Device
from anemon.devices.pmd3.errors import AppNotInstalled, NoDevice, UsbmuxdUnreachable
from anemon.devices.virtual import VirtualIPhone
from anemon.sources.items import LogGap, LogItem, LogReset
from anemon.sources.refresh import WINDOW
from tests.devices.helpers import BUNDLE, LOG, StandInPhone

TIMEOUT_S = 15


async def next_batch(follow: AsyncIterator[list[LogItem]]) -> list[LogItem]:
    async with asyncio.timeout(TIMEOUT_S):
        return await anext(follow)


async def test_connect_names_the_virtual_iphone(phone: VirtualIPhone, pmd3: Pmd3Device) -> None:
    async with asyncio.timeout(TIMEOUT_S):
        info = await pmd3.connect()
        await pmd3.close()
    assert (info.kind, info.udid, info.name, info.os) == (
        "pymobiledevice3",
        phone.udid,
        "Virtual iPhone",
        "18.5",
    )


async def test_telemetry_reads_battery_and_disk(phone: VirtualIPhone, pmd3: Pmd3Device) -> None:
    async with asyncio.timeout(TIMEOUT_S):
        telemetry = await pmd3.telemetry()
        await pmd3.close()
    assert telemetry == Telemetry(
        battery=87.39,  # AppleRawCurrentCapacity / NominalChargeCapacity, finer than the gauge
        charging=True,
        plugged=True,
        temperature_c=31.25,
        free_gb=38.5,
        total_gb=128.0,
        power_w=4.92,  # charging: the charger's current, and `charging` says so
    )


async def test_follow_reads_only_new_bytes_and_each_line_once(
    phone: VirtualIPhone, pmd3: Pmd3Device, stand_in: StandInPhone, tmp_path: Path
) -> None:
    stand_in.append("START arm=a\nLOAD arm=a load_s=0.1\nTRIAL arm=a tri")
    mirror = tmp_path / "mirror" / "bench.log"
    follow = pmd3.follow_log(BUNDLE, LOG, mirror)
    try:
        assert await next_batch(follow) == ["START arm=a", "LOAD arm=a load_s=0.1"]
        stand_in.append("al=1\nTRIAL arm=a trial=2\n")
        assert await next_batch(follow) == ["TRIAL arm=a trial=1", "TRIAL arm=a trial=2"]
        stand_in.append("END arm=a\n")
        assert await next_batch(follow) == ["END arm=a"]
    finally:
        await follow.aclose()
        await pmd3.close()
    size = len(stand_in.files[LOG])
    # each new byte once; besides, each read at most the window the rule compares, not the file
    assert size <= phone.afc_stats.bytes_read <= size + phone.afc_stats.reads * WINDOW
    assert mirror.read_bytes() == bytes(stand_in.files[LOG])


async def test_unplug_mid_run_is_a_gap_then_a_backfill_exactly_once(
    phone: VirtualIPhone, pmd3: Pmd3Device, stand_in: StandInPhone, tmp_path: Path
) -> None:
    stand_in.append("TRIAL n=1\n")
    follow = pmd3.follow_log(BUNDLE, LOG, tmp_path / "bench.log")
    seen: list[LogItem] = []
    try:
        seen += await next_batch(follow)
        phone.detach()
        stand_in.append("TRIAL n=2\nTRIAL n=3\n")  # written while unplugged
        gap = await next_batch(follow)
        assert gap == [LogGap("begin", "the iPhone went away (unplugged?)")]
        phone.attach()
        back = await next_batch(follow)
        stand_in.append("TRIAL n=4\n")
        seen += gap + back + await next_batch(follow)
    finally:
        await follow.aclose()
        await pmd3.close()
    lines = [item for item in seen if isinstance(item, str)]
    assert lines == ["TRIAL n=1", "TRIAL n=2", "TRIAL n=3", "TRIAL n=4"]
    assert back[0] == LogGap("end", "the iPhone is back")
    assert (tmp_path / "bench.log").read_bytes() == bytes(stand_in.files[LOG])


async def test_a_log_replaced_while_unplugged_is_a_reset(
    phone: VirtualIPhone, pmd3: Pmd3Device, stand_in: StandInPhone, tmp_path: Path
) -> None:
    stand_in.append("START arm=old\nTRIAL arm=old n=1\n")
    follow = pmd3.follow_log(BUNDLE, LOG, tmp_path / "bench.log")
    try:
        await next_batch(follow)
        phone.detach()
        stand_in.files[LOG] = bytearray(b"START arm=new\nTRIAL arm=new n=1\nTRIAL arm=new n=2\n")
        await next_batch(follow)  # the gap
        phone.attach()
        back = await next_batch(follow)
    finally:
        await follow.aclose()
        await pmd3.close()
    assert back[0] == LogGap("end", "the iPhone is back")
    assert isinstance(back[1], LogReset)
    assert back[2:] == ["START arm=new", "TRIAL arm=new n=1", "TRIAL arm=new n=2"]
    assert (tmp_path / "bench.log").read_bytes() == bytes(stand_in.files[LOG])


async def test_a_shorter_log_is_a_reset(
    phone: VirtualIPhone, pmd3: Pmd3Device, stand_in: StandInPhone, tmp_path: Path
) -> None:
    stand_in.append("START arm=a\nTRIAL arm=a n=1\n")
    follow = pmd3.follow_log(BUNDLE, LOG, tmp_path / "bench.log")
    try:
        await next_batch(follow)
        stand_in.files[LOG] = bytearray(b"START arm=b\n")
        batch = await next_batch(follow)
    finally:
        await follow.aclose()
        await pmd3.close()
    assert [type(batch[0]), *batch[1:]] == [LogReset, "START arm=b"]


async def test_a_log_replaced_by_a_longer_one_between_polls_is_a_reset(
    phone: VirtualIPhone, pmd3: Pmd3Device, stand_in: StandInPhone, tmp_path: Path
) -> None:
    old = [f"TRIAL arm=old trial={i} decode_tps=70" for i in range(20)]
    new = [f"TRIAL arm=new trial={i} decode_tps=60" for i in range(23)]
    stand_in.append("".join(line + "\n" for line in old))
    follow = pmd3.follow_log(BUNDLE, LOG, tmp_path / "bench.log")
    try:
        assert await next_batch(follow) == old
        stand_in.files[LOG] = bytearray("".join(line + "\n" for line in new).encode())
        batch = await next_batch(follow)
    finally:
        await follow.aclose()
        await pmd3.close()
    assert [type(batch[0]), *batch[1:]] == [LogReset, *new]  # 23 of 23, after a reset
    assert (tmp_path / "bench.log").read_bytes() == bytes(stand_in.files[LOG])


async def test_a_log_rotated_on_the_phone_gives_each_line_once_and_no_torn_half(
    phone: VirtualIPhone, pmd3: Pmd3Device, stand_in: StandInPhone, tmp_path: Path
) -> None:
    lines = [f"TRIAL arm=a trial={i} decode_tps={70 + i % 5}" for i in range(29)]
    text = "".join(line + "\n" for line in lines)
    stand_in.append(text[: text.index("trial=20 ") + 4])  # 20 lines and a half
    follow = pmd3.follow_log(BUNDLE, LOG, tmp_path / "bench.log")
    try:
        seen = await next_batch(follow)
        stand_in.files[LOG] = bytearray(text[text.index("TRIAL arm=a trial=5 ") :].encode())
        batch = await next_batch(follow)
    finally:
        await follow.aclose()
        await pmd3.close()
    assert isinstance(batch[0], LogReset) and "rotated" in batch[0].reason
    assert "its 15 lines before it were read already" in batch[0].reason
    seen += batch[1:]
    assert len(seen) == 29 and seen == lines
    assert (tmp_path / "bench.log").read_bytes() == bytes(stand_in.files[LOG])


async def test_a_log_cut_short_between_the_stat_and_the_read_is_waited_for(
    phone: VirtualIPhone,
    pmd3: Pmd3Device,
    stand_in: StandInPhone,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lines = [f"TRIAL arm=a trial={i} decode_tps=70" for i in range(200)]
    text = "".join(line + "\n" for line in lines)
    stand_in.append(text[: text.index("trial=150 ")])
    follow = pmd3.follow_log(BUNDLE, LOG, tmp_path / "bench.log")
    read = stand_in.read_container_file
    cut = [0]

    def shorter(bundle: str, path: str, offset: int, size: int) -> bytes:
        if cut[0]:  # the stat saw the whole file; the read finds it truncated
            cut[0] -= 1
            return read(bundle, path, offset, size)[: max(0, 100 - offset)]
        return read(bundle, path, offset, size)

    try:
        seen = await next_batch(follow)
        monkeypatch.setattr(stand_in, "read_container_file", shorter)
        cut[0] = 3
        stand_in.append(text[text.index("trial=150 ") :])
        while len(seen) < len(lines):
            seen += await next_batch(follow)
    finally:
        await follow.aclose()
        await pmd3.close()
    assert seen == lines


async def test_a_log_not_written_yet_is_waited_for(
    phone: VirtualIPhone, pmd3: Pmd3Device, stand_in: StandInPhone, tmp_path: Path
) -> None:
    follow = pmd3.follow_log(BUNDLE, LOG, tmp_path / "bench.log")
    try:
        stand_in.append("START arm=a\n")
        assert await next_batch(follow) == ["START arm=a"]
    finally:
        await follow.aclose()
        await pmd3.close()


async def test_unknown_bundle_says_the_app_is_not_installed(
    phone: VirtualIPhone, pmd3: Pmd3Device, tmp_path: Path
) -> None:
    follow = pmd3.follow_log("com.example.nope", LOG, tmp_path / "bench.log")
    with pytest.raises(AppNotInstalled) as caught:
        await next_batch(follow)
    await pmd3.close()
    assert str(caught.value) == (
        "the app com.example.nope is not installed (or not development-signed)"
    )


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_no_usbmuxd_says_where_it_looked(
    monkeypatch: pytest.MonkeyPatch, pmd3: Pmd3Device
) -> None:
    address = f"127.0.0.1:{_closed_port()}"
    monkeypatch.setenv("USBMUXD_SOCKET_ADDRESS", address)
    with pytest.raises(UsbmuxdUnreachable) as caught:
        async with asyncio.timeout(TIMEOUT_S):
            await pmd3.connect()
    assert str(caught.value) == (
        f"cannot reach usbmuxd at {address}: is a phone attached / is usbmuxd running?"
    )


async def test_no_iphone_attached(phone: VirtualIPhone, pmd3: Pmd3Device) -> None:
    phone.detach()
    with pytest.raises(NoDevice) as caught:
        async with asyncio.timeout(TIMEOUT_S):
            await pmd3.telemetry()
    assert str(caught.value) == "no iPhone attached"
    assert isinstance(caught.value, DeviceGone) and caught.value.transient


async def test_follow_with_nothing_attached_fails_at_once(
    phone: VirtualIPhone, pmd3: Pmd3Device, tmp_path: Path
) -> None:
    phone.detach()
    with pytest.raises(NoDevice):
        await next_batch(pmd3.follow_log(BUNDLE, LOG, tmp_path / "bench.log"))


def test_importing_the_backend_does_not_import_pymobiledevice3() -> None:
    code = (
        "import sys, anemon.devices.pmd3, anemon.devices.pmd3.install, anemon.cli.devices\n"
        "loaded = [m for m in sys.modules if m.startswith('pymobiledevice3')]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
