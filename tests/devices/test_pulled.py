"""The follow sim and devicectl share: gaps while the pull fails, nothing said while it learns
nothing, each line of the mirror once."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from anemon.devices.base import DeviceGone
from anemon.devices.pulled import Pull, follow_pulled
from anemon.sources.items import LogGap, LogItem

TIMEOUT_S = 15
Step = str | Exception | None
"""What one pull finds: the container file's text, the device gone, or no file yet."""


async def no_wait(_seconds: float) -> None:
    await asyncio.sleep(0)


def scripted(mirror: Path, steps: list[Step]) -> Pull:
    """A pull per step; text is copied whole over the mirror."""

    async def pull() -> bool:
        step = steps.pop(0)
        if isinstance(step, Exception):
            raise step
        if step is None:
            return False
        mirror.write_text(step)
        return True

    return pull


async def batches(mirror: Path, steps: list[Step]) -> list[list[LogItem]]:
    """Every batch the follow yields until the steps are used up (the last one must yield)."""
    found: list[list[LogItem]] = []
    follow = follow_pulled(scripted(mirror, steps), mirror, poll_s=0.01, back="back", sleep=no_wait)
    async with contextlib.aclosing(follow), asyncio.timeout(TIMEOUT_S):
        while steps:
            found.append(await anext(follow))
    return found


async def test_each_line_once_however_often_the_file_is_copied(tmp_path: Path) -> None:
    found = await batches(tmp_path / "t.log", ["A\n", "A\n", "A\nB\n", "A\nB\nC\n"])
    assert found == [["A"], ["B"], ["C"]]


async def test_a_failed_pull_opens_one_gap_closed_by_the_next_pull_that_works(
    tmp_path: Path,
) -> None:
    gone = DeviceGone("unplugged", transient=True)
    found = await batches(tmp_path / "t.log", ["A\n", gone, gone, "A\nB\n"])
    assert found == [["A"], [LogGap("begin", "unplugged")], [LogGap("end", "back"), "B"]]


async def test_a_pull_that_learns_nothing_neither_closes_a_gap_nor_reads(tmp_path: Path) -> None:
    gone = DeviceGone("unplugged", transient=True)
    found = await batches(tmp_path / "t.log", [gone, None, None, "A\n"])
    assert found == [[LogGap("begin", "unplugged")], [LogGap("end", "back"), "A"]]


async def test_a_copy_taken_mid_write_then_the_real_copy_reads_each_line_once(
    tmp_path: Path,
) -> None:
    log = "".join(f"TRIAL arm=a trial={i} decode_tps=70\n" for i in range(110))
    cut = log.index("trial=107") + 3
    torn = log[:cut] + "\0" * (len(log) - cut)  # the copy's last bytes not written yet
    found = await batches(tmp_path / "t.log", [torn, log])
    lines = [item for batch in found for item in batch if isinstance(item, str)]
    assert len(lines) == 110 and lines == log.splitlines()
    assert all(isinstance(item, str) for batch in found for item in batch)  # no reset
