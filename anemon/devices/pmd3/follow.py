"""Mirror a file of the app's container over house_arrest/AFC, reading only the new bytes.

Each poll: stat the file; if it grew, open it, seek to the offset, read the rest, close.
The bytes go to the local mirror and to a LineAssembler, so every complete line is yielded
exactly once. When the phone goes away the follow yields `LogGap("begin")`, keeps trying to
reconnect, then yields `LogGap("end")` and the lines written meanwhile. A file that got
shorter, or whose first bytes changed while the phone was away, is another log: `LogReset`,
then that file from its first byte.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from anemon.sources.items import LogGap, LogItem, LogReset
from anemon.sources.lines import LineAssembler

if TYPE_CHECKING:
    from anemon.devices.pmd3.connection import Pmd3Connection

HEAD_BYTES = 64
"""How much of the file's start is kept to recognise the same file after a reconnect."""


class LogFollower:
    """Follows `path` of `bundle`'s container over `connection`: every `poll_s`, and every
    `reconnect_s` while the phone is away."""

    def __init__(
        self,
        connection: Pmd3Connection,
        bundle: str,
        path: str,
        mirror: Path,
        *,
        poll_s: float,
        reconnect_s: float,
    ) -> None:
        self.connection = connection
        self.bundle = bundle
        self.path = path
        self.mirror = mirror
        self.poll_s = poll_s
        self.reconnect_s = reconnect_s
        self._afc: Any = None
        self._out: IO[bytes] | None = None
        self._assembler = LineAssembler()
        self._offset = 0
        self._head = b""
        self._connected_once = False
        self._in_gap = False
        self._verify = False

    async def run(self) -> AsyncIterator[list[LogItem]]:
        self.mirror.parent.mkdir(parents=True, exist_ok=True)
        self._out = self.mirror.open("wb")
        try:
            while True:
                items, delay = await self._step()
                if items:
                    yield items
                await asyncio.sleep(delay)
        finally:
            await self._close_afc()
            self._out.close()

    async def _step(self) -> tuple[list[LogItem], float]:
        from pymobiledevice3.exceptions import AfcFileNotFoundError

        items: list[LogItem] = []
        try:
            if self._afc is None:
                self._afc = await self._open_afc()
                if self._in_gap:
                    items.append(LogGap("end", "the iPhone is back"))
                    self._in_gap, self._verify = False, True
            items += await self._poll()
        except AfcFileNotFoundError:
            pass  # the app has not written its log yet
        except Exception as e:
            error = self.connection.error(e, bundle=self.bundle)
            if not (error.transient and self._connected_once):
                raise error from e
            await self._close_afc()
            await self.connection.drop()
            if not self._in_gap:
                items.append(LogGap("begin", str(error)))
                self._in_gap = True
            return items, self.reconnect_s
        return items, self.poll_s

    async def _open_afc(self) -> Any:
        from pymobiledevice3.services.house_arrest import HouseArrestService

        lockdown = await self.connection.lockdown()
        afc = await HouseArrestService.create(lockdown, self.bundle)
        self._connected_once = True
        return afc

    async def _close_afc(self) -> None:
        afc, self._afc = self._afc, None
        if afc is not None:
            with contextlib.suppress(Exception):
                await afc.aclose()

    async def _poll(self) -> list[LogItem]:
        size = int((await self._afc.stat(self.path))["st_size"])
        items: list[LogItem] = []
        if self._verify:
            self._verify = False
            if size < self._offset or not await self._same_head(size):
                items.append(self._reset("the log was replaced while the iPhone was away"))
        elif size < self._offset:
            items.append(self._reset("the log got shorter: it was replaced"))
        if size > self._offset:
            items += self._accept(await self._read(self._offset, size - self._offset))
        return items

    async def _same_head(self, size: int) -> bool:
        if not self._head:
            return True
        if size < len(self._head):
            return False
        return await self._read(0, len(self._head)) == self._head

    async def _read(self, offset: int, size: int) -> bytes:
        afc = self._afc
        handle = await afc.fopen(self.path)
        try:
            await afc.fseek(handle, offset)
            return bytes(await afc.fread(handle, size))
        finally:
            await afc.fclose(handle)

    def _accept(self, data: bytes) -> list[LogItem]:
        if len(self._head) < HEAD_BYTES:
            self._head += data[: HEAD_BYTES - len(self._head)]
        self._offset += len(data)
        assert self._out is not None
        self._out.write(data)
        self._out.flush()
        return list(self._assembler.feed(data))

    def _reset(self, reason: str) -> LogReset:
        self._offset, self._head, self._assembler = 0, b"", LineAssembler()
        assert self._out is not None
        self._out.seek(0)
        self._out.truncate()
        return LogReset(reason)
