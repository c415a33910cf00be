"""A GPU reading (graphics) goes with the app's next sysmontap sample, one event for both, or
alone when none comes within GPU_WAIT intervals or the sample is another process's; nothing
is dropped, nothing made up."""

from __future__ import annotations

import asyncio
from typing import Any

from anemon.devices.base import AppSample
from anemon.devices.pmd3.samples import Read
from anemon.devices.pmd3.watch import AppWatch, Pace, Warnings

BOUND_S = 10.0
"""A bound on a wait, never a timing assertion."""


def watch(process_s: float = 1.0) -> AppWatch:
    session: Any = object()  # the readings below need nothing of it
    return AppWatch(session, "b", Pace(process_s=process_s), Warnings())


async def news(app: AppWatch) -> AppSample:
    got = await asyncio.wait_for(app._queue.get(), BOUND_S)
    assert isinstance(got, AppSample)
    return got


async def test_a_gpu_reading_goes_with_the_apps_next_sample() -> None:
    app = watch()
    app._read_gpu(Read(AppSample(7, gpu_pct=40.0)))
    app._read(Read(AppSample(7, cpu_pct=90.0, mem_gb=1.5)))
    assert await news(app) == AppSample(7, cpu_pct=90.0, mem_gb=1.5, gpu_pct=40.0)
    assert app._queue.empty() and app._gpu_timer is None


async def test_a_gpu_reading_no_sample_takes_goes_alone() -> None:
    app = watch(process_s=0.01)
    app._read_gpu(Read(AppSample(7, gpu_pct=40.0)))
    assert await news(app) == AppSample(7, gpu_pct=40.0)


async def test_another_processs_sample_or_a_newer_reading_sends_the_waiting_one_alone() -> None:
    app = watch()
    app._read_gpu(Read(AppSample(7, gpu_pct=40.0)))
    app._read_gpu(Read(AppSample(7, gpu_pct=50.0)))
    assert await news(app) == AppSample(7, gpu_pct=40.0)
    app._read(Read(AppSample(8, mem_gb=1.0)))  # the app relaunched: not its GPU reading's pid
    assert [await news(app), await news(app)] == [AppSample(7, gpu_pct=50.0),
                                                  AppSample(8, mem_gb=1.0)]  # fmt: skip
