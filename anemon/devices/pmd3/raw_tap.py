"""sysmontap's messages as the phone sent them, undecoded: the one module that reaches into
pymobiledevice3's DTX internals (tests/ui/test_adapters.py checks what it relies on).

pymobiledevice3 decodes every notification whole before a handler sees it (`DTXChannel.
_handle_notification` reads `message.payload`): for sysmontap that is every process the phone
runs, every interval, of which anemon reads one (`samples.rows`). The tap's channel here hands
the payload's bytes to its queue instead; everything else (the channel, `setConfig:`, `start`,
`stop`) is pymobiledevice3's tap service, as its `Sysmontap` uses it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any


def sysmontap_config(
    process_attributes: list[str], system_attributes: list[str], interval_ms: int
) -> dict[str, Any]:
    """What pymobiledevice3's `Sysmontap` asks of the phone (`setConfig:`), for these lists."""
    return {
        "ur": interval_ms,  # a message per sample, not one a millisecond
        "bm": 0,
        "procAttrs": process_attributes,
        "sysAttrs": system_attributes,
        "cpuUsage": True,
        "physFootprint": True,
        "sampleInterval": interval_ms * 1_000_000,
    }


def _raw_service() -> Any:
    from pymobiledevice3.services.dvt.instruments.tap import TapService

    class RawTapService(TapService):
        """A tap whose notifications are queued as ("raw", payload bytes)."""

        def __init__(self, ctx: Any) -> None:
            super().__init__(ctx)
            channel: Any = self._channel  # its method shadowed on this channel alone
            channel._handle_notification = self.undecoded

        async def undecoded(self, message: Any) -> None:
            await self.messages.put(("raw", bytes(message.payload_data)))

    return RawTapService


@asynccontextmanager
async def raw_tap(dvt: Any, config: Mapping[str, Any]) -> AsyncIterator[AsyncIterator[bytes]]:
    """sysmontap configured with `config` (`sysmontap_config`) and started on the DvtProvider
    `dvt`: its messages' payloads, as bytes (the first, an acknowledgement, dropped); stopped
    on the way out."""
    from pymobiledevice3.services.dvt.instruments.sysmontap import Sysmontap

    service = await dvt.dtx.open_channel(Sysmontap.IDENTIFIER, _raw_service())
    await service.set_config_(dict(config))
    await service.start()
    await service.messages.get()
    try:
        yield _payloads(service)
    finally:
        await service.stop()


async def _payloads(service: Any) -> AsyncIterator[bytes]:
    while True:
        _, payload = await service.messages.get()
        yield payload
