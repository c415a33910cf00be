"""Drive simulated phones in (scaled) real time: what `python -m anemon.devices.virtual` runs
beside its servers, and what tests run beside several virtual iPhones."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Protocol

TICK_S = 0.25


class Advancing(Protocol):
    """A simulated phone (`anemon.simulator.SimulatedIPhone`): time moves when told."""

    def advance(self, dt: float) -> None: ...


async def advance(
    sims: Sequence[Advancing], speed: float = 1.0, seconds: float = 0.0, tick_s: float = TICK_S
) -> None:
    """Advance every phone by `speed` simulated seconds per second, every `tick_s`, for
    `seconds` (0: until cancelled). Run it in the loop that serves the phones: the simulator
    is not thread-safe and the servers read it from that loop."""
    loop = asyncio.get_running_loop()
    start = last = loop.time()
    while not seconds or last - start < seconds:
        await asyncio.sleep(tick_s)
        now = loop.time()
        for sim in sims:
            sim.advance((now - last) * speed)
        last = now
