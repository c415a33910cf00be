"""`com.apple.instruments.server.services.graphics.opengl`: the GPU, about once a second.

`startSamplingAtTimeInterval:` (answered OK) starts a dict every `period_s`:
`Device Utilization %` (what the running apps keep busy: high for a GPU arm, low for an ANE
arm), `Renderer Utilization %`, `Tiler Utilization %`, `Alloc system memory`, `In use system
memory` (bytes), `CoreAnimationFramesPerSecond` (0 with the screen off) and
`XRVideoCardRunTimeStamp` (µs). `stopSampling` stops it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from anemon.devices.virtual.dvt.connection import Channel, unknown
from anemon.devices.virtual.dvt.processcontrol import Processes

IDENTIFIER = "com.apple.instruments.server.services.graphics.opengl"
GPU_MEMORY_BYTES = 180_000_000
"""What the system's own GPU work holds (est.)."""


class Graphics:
    def __init__(
        self, channel: Channel, sim: Processes, clock: Callable[[], float], period_s: float
    ) -> None:
        self.channel, self.sim, self.clock, self.period_s = channel, sim, clock, period_s

    async def call(self, selector: str, args: list[Any]) -> Any:
        if selector == "startSamplingAtTimeInterval:":
            self.channel.quiet()
            self.channel.every(self.period_s, self._sample)
            return None
        if selector == "stopSampling":
            self.channel.quiet()
            return None
        raise unknown(selector)

    def close(self) -> None:
        """Nothing held: the samples stop with the channel."""

    def _sample(self) -> None:
        busy = min(100.0, sum(u.gpu_pct for u in self.sim.usage()))
        memory = GPU_MEMORY_BYTES + int(busy * 4_000_000)
        self.channel.send({
            "Device Utilization %": round(busy),
            "Renderer Utilization %": round(busy * 0.92),
            "Tiler Utilization %": round(busy * 0.31),
            "Alloc system memory": memory,
            "In use system memory": memory * 3 // 4,
            "CoreAnimationFramesPerSecond": 60 if self.sim.screen_on else 0,
            "XRVideoCardRunTimeStamp": int(self.clock() * 1_000_000),
        })  # fmt: skip
