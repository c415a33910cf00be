"""Follow a container file by pulling it whole into the local mirror every `poll_s`.

For backends that cannot read a byte range (devicectl's `device copy from`, the simulated
phone): each poll copies the file over the mirror (write beside it, then rename), and the
MirrorTailer reads the mirror's new lines, so every complete line is yielded exactly once
however often the file is copied. While the device cannot be reached the follow yields
`LogGap("begin")` once, then, at the first pull that works, `LogGap("end")` and the lines
written meanwhile (the log on the phone survives; docs/devices.md).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable
from pathlib import Path

from anemon.devices.base import DeviceError
from anemon.sources.items import LogGap, LogItem
from anemon.sources.mirror import MirrorTailer

Pull = Callable[[], Awaitable[bool]]
"""Copy the container file over the mirror. Raises DeviceError when the device cannot be
reached; returns False when it learnt nothing (devicectl: no such file yet), which changes
nothing: no gap opened or closed, nothing read."""


async def follow_pulled(
    pull: Pull,
    mirror: Path,
    *,
    poll_s: float,
    back: str,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> AsyncGenerator[list[LogItem]]:
    """Batches of new lines of the mirror, refreshed by `pull` every `poll_s` (by `sleep`).

    `back` is the reason of the `LogGap("end")` that closes a gap. Ends when closed.
    """
    tailer = MirrorTailer(Path(mirror), poll_s=poll_s)
    away = False
    while True:
        batch: list[LogItem] = []
        try:
            pulled = await pull()
        except DeviceError as e:
            if not away:
                away = True
                batch.append(LogGap("begin", str(e)))
        else:
            if pulled:
                if away:
                    away = False
                    batch.append(LogGap("end", back))
                batch.extend(tailer.check())
        if batch:
            yield batch
        await sleep(poll_s)
