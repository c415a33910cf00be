"""Mirror a file of the app's container over house_arrest/AFC, reading only the new bytes.

Each poll: stat the file, then read its head and everything from the window before the
offset on (the new bytes, and the bytes the rule compares), and apply the mirror's rule
(`sources.refresh`): the same log grown is read on; a rewrite in progress (or a last run of
NULs) is waited for; a log rotated or rewritten with an earlier line changed is read whole
once to find its last lines read, and read on after them (`LogReset` saying so); another log
is read from its first byte (`LogReset`). The bytes go to the local mirror and to a
LineAssembler, so every complete line is yielded exactly once. When the phone goes away the
follow yields `LogGap("begin")`, keeps trying to reconnect, then yields `LogGap("end")` and
the lines written meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from anemon.sources.items import LogGap, LogItem, LogReset
from anemon.sources.lines import LineAssembler
from anemon.sources.refresh import NotFetched, Seen, Snapshot, Verdict, judge, seen_up_to

if TYPE_CHECKING:
    from anemon.devices.pmd3.connection import Pmd3Connection


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
        self._seen = Seen()
        self._connected_once = False
        self._in_gap = False

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
                    self._in_gap = False
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
        snapshot = await self._fetch(size, self._near(size))
        try:
            verdict = judge(self._seen, snapshot, snapshot.size)
        except NotFetched:  # changed before the offset: the rule reads the whole file
            snapshot = await self._fetch(size, [(0, size)])
            verdict = judge(self._seen, snapshot, snapshot.size)
        return self._apply(verdict, snapshot)

    def _near(self, size: int) -> list[tuple[int, int]]:
        """The (position, length) ranges the rule reads of a log that grew: its head, and from
        the window before the offset to the end (one range where they meet)."""
        head, start = min(len(self._seen.head), size), self._seen.tail_start
        if start <= head:
            return [(0, size)]
        return [(0, head), (start, max(0, size - start))]

    async def _fetch(self, size: int, ranges: list[tuple[int, int]]) -> Snapshot:
        afc = self._afc
        handle = await afc.fopen(self.path)
        try:
            parts = []
            for position, length in ranges:
                await afc.fseek(handle, position)
                data = bytes(await afc.fread(handle, length))
                parts.append((position, data))
                if len(data) < length:  # cut short since the stat: the file ends there now
                    size = position + len(data)
        finally:
            await afc.fclose(handle)
        return Snapshot(size, tuple(parts))

    def _apply(self, verdict: Verdict, file: Snapshot) -> list[LogItem]:
        """Act on the rule's verdict: the mirror and the lines follow the phone's file."""
        items: list[LogItem] = []
        if verdict.action == "wait":
            return items
        if verdict.action == "reset":
            items.append(LogReset(verdict.reason))
            self._seen, self._assembler = Seen(), LineAssembler()
            self._rewrite_mirror(b"")
        elif verdict.action == "resume":
            items.append(LogReset(verdict.reason, read_on=True))
            self._seen = seen_up_to(file, verdict.at)
            self._assembler.drop_incomplete()  # read again from the file as it is now
            self._rewrite_mirror(file.read_at(0, verdict.at))
        new = file.read_at(self._seen.offset, verdict.end - self._seen.offset)
        return items + self._accept(new)

    def _accept(self, data: bytes) -> list[LogItem]:
        if not data:
            return []
        self._seen.advance(data)
        assert self._out is not None
        self._out.write(data)
        self._out.flush()
        return list(self._assembler.feed(data))

    def _rewrite_mirror(self, data: bytes) -> None:
        assert self._out is not None
        self._out.seek(0)
        self._out.truncate()
        self._out.write(data)
