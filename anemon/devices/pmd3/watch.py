"""The bench app while a run goes, over the run's one DVT connection (session.py) and the
crash report service: `AppWatch.news()` yields its exits, samples, crash reports and gaps.

Four streams, each in a task of its own, into one queue:
- exits: the termination message as it comes, and `processIdentifierForBundleIdentifier:`
  every EXIT_POLL_S (or `poll_s`, the log's pull, if sooner) in case the phone sends none.
  Watching an app someone else launched (`finds`, `anemon watch --device`), that poll is all
  there is (the phone tells only the launching connection of an exit): it finds the app's
  pid, sees it gone (an exit), and follows the next pid the bundle runs as. sysmontap lists
  every process the phone runs: a poll is not asked while a row since the last one listed
  the pid followed (each DTX round trip is about 1 ms of the host's CPU), and is asked at once
  when a row no longer lists it, so an exit is seen as soon as before or sooner;
- sysmontap every `process_s` (a phone may deliver every 3-5 s: what comes is yielded, nothing
  is filled in); silent for `silent_s` (SILENT_S) it is a gap, not a crash;
- graphics (`Device Utilization %`), each reading given with the app's next sysmontap sample
  if one comes within GPU_WAIT x `process_s` (one event, one redraw of a dashboard, for
  both), else alone;
- crash reports: the CrashReporter folder listed every `poll_s` (at least MIN_POLL_S): what
  was there when the watch began is not this run's.
All in real seconds, as the backend keeps its own time.
A stream that fails (the phone away, a channel refused) is a gap with its reason, and tries
again after `reconnect_s`, doubled up to RETRY_MAX_S; the DVT connection is reopened by the
session alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from anemon.devices import reports
from anemon.devices.base import AppExit, AppGap, AppNews, AppSample
from anemon.devices.pmd3 import raw_tap, samples
from anemon.devices.pmd3.keyed_archive import Unreadable

if TYPE_CHECKING:
    from anemon.devices.pmd3.apps import Executables
    from anemon.devices.pmd3.session import DvtSession

EXIT_POLL_S = 1.5
SILENT_S = 10.0
"""sysmontap silent this long (real seconds) is a gap."""
MIN_POLL_S = 0.1
GPU_WAIT = 1.5
"""How many sysmontap intervals a GPU reading waits for the app's sample to go with."""
GONE = "exited (its pid is gone)"
"""An exit seen by polling the pid, with no termination message to say how."""
RETRY_MAX_S = 30.0


@dataclass(frozen=True, slots=True)
class Pace:
    """How often the watch looks, in real seconds."""

    process_s: float = 1.0
    """sysmontap's interval (plan `device.process_s`)."""
    poll_s: float = 2.0
    """The crash report listing's and the exit poll's (the log's pull, plan `device.poll_s`)."""
    reconnect_s: float = 2.0
    """The first wait before a failed stream tries again."""
    silent_s: float = SILENT_S
    """sysmontap silent this long is a gap."""


class Warnings:
    """Dropped samples and reports, counted, with the last reason."""

    def __init__(self) -> None:
        self.count = 0
        self.last = ""

    def add(self, why: str) -> None:
        self.count += 1
        self.last = why


class AppWatch:
    """The news of one bundle from the session's launches, until closed."""

    def __init__(
        self,
        session: DvtSession,
        bundle: str,
        pace: Pace,
        warnings: Warnings,
        executables: Executables | None = None,
        *,
        finds: bool = False,
    ) -> None:
        self.session = session
        self.executables = executables
        """Where the app's executable name is asked (a report may name it by that alone)."""
        self.bundle = bundle
        self.finds = finds
        """The app is not launched here: its pid is found by its bundle, and found again."""
        self.process_s = pace.process_s
        self.poll_s = max(pace.poll_s, MIN_POLL_S)
        self.silent_s = pace.silent_s
        self.reconnect_s = pace.reconnect_s
        self.warnings = warnings
        self._queue: asyncio.Queue[AppNews] = asyncio.Queue()
        self._exited: set[int] = set()
        self._gpu: AppSample | None = None
        """The latest GPU reading, waiting for the app's next sample (`_with_gpu`)."""
        self._gpu_timer: asyncio.TimerHandle | None = None
        self._listed: int | None = None
        """The pid followed, if a sysmontap row since the last poll listed it (it runs)."""
        self._poll_wait: asyncio.Timeout | None = None
        """The exit poll's wait, while it waits: a row without the pid ends it."""
        self._seen: set[str] | None = None
        """The reports listed so far: the first listing's are not this run's; one written
        while the phone was away is new when it is back."""

    async def news(self) -> AsyncIterator[AppNews]:
        streams = {"exits": self._exits, "sysmontap": self._sysmon, "graphics": self._graphics,
                   "reports": self._reports}  # fmt: skip
        tasks = [asyncio.create_task(self._kept(name, run)) for name, run in streams.items()]
        try:
            while True:
                yield await self._queue.get()
        finally:
            self._take_gpu()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def _put(self, news: AppNews) -> None:
        self._queue.put_nowait(news)

    async def _kept(
        self, stream: str, run: Callable[[Callable[[], None]], Awaitable[None]]
    ) -> None:
        """Run `stream` again and again: a failure is a gap (once), the first news after it
        ends the gap."""
        away = False
        delay = self.reconnect_s

        def back() -> None:
            nonlocal away, delay
            delay = self.reconnect_s
            if away:
                away = False
                self._put(AppGap(stream, "end", "back"))

        while True:
            try:
                await run(back)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # a stream never ends the watch: it is a gap and a retry
                if not away:
                    away = True
                    self._put(AppGap(stream, "begin", f"{stream}: {e}"))
            await asyncio.sleep(delay)
            delay = min(delay * 2, RETRY_MAX_S)

    # -- exits -------------------------------------------------------------------------------

    async def _exits(self, back: Callable[[], None]) -> None:
        while True:
            news = await self._message_or_poll()
            if news is not None:
                self._exit(news)
                continue
            if self._runs():
                continue
            if self.finds:
                await self._find(back)
                continue
            pid = self.session.pid
            if pid is None or pid in self._exited:
                continue
            running = await self.session.running_pid(self.bundle)
            back()
            if running != pid:
                self._exit(await self._message_for(pid) or AppExit(pid, GONE))

    async def _message_or_poll(self) -> AppExit | None:
        """The next termination message; None when it is time to poll (EXIT_POLL_S, or at
        once when sysmontap no longer lists the pid: `_list`)."""
        try:
            async with asyncio.timeout(min(EXIT_POLL_S, self.poll_s)) as self._poll_wait:
                return await self.session.exits.get()
        except TimeoutError:
            return None
        finally:
            self._poll_wait = None

    def _runs(self) -> bool:
        """A sysmontap row since the last poll listed the pid followed: it runs, nothing to
        ask (taken: the next poll needs a row of its own)."""
        listed, self._listed = self._listed, None
        return listed is not None and listed == self.session.pid

    def _list(self, row: Any, pid: int) -> None:
        """Note whether sysmontap's `row` lists `pid`; one that no longer does (an exit, or a
        relaunch) has the exit poll asked now."""
        listed = samples.listed(row, pid)
        if listed:
            self._listed = pid
        elif listed is False and pid not in self._exited:
            self._listed = None
            if self._poll_wait is not None:
                self._poll_wait.reschedule(asyncio.get_running_loop().time())

    async def _find(self, back: Callable[[], None]) -> None:
        """The app someone else launched: the pid it runs as now. The one followed until now
        is gone (its exit: no termination message comes for it); a new one is followed."""
        running = await self.session.running_pid(self.bundle)
        back()
        pid = self.session.pid
        if running == pid:
            return
        if pid is not None:
            self._exit(AppExit(pid, GONE))
        if running:
            self.session.follow(running)

    async def _message_for(self, pid: int) -> AppExit | None:
        """The termination message of `pid`, which may be on its way (with its signal), if it
        comes within a poll."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.poll_s):
                while (news := await self.session.exits.get()).pid != pid:
                    self._exit(news)
                return news
        return None

    def _exit(self, news: AppExit) -> None:
        """Each pid's exit once, the termination message's reason (with its signal) first."""
        if news.pid in self._exited:
            return
        self._exited.add(news.pid)
        self._put(news)

    # -- samples -----------------------------------------------------------------------------

    async def _sysmon(self, back: Callable[[], None]) -> None:
        from pymobiledevice3.services.dvt.instruments.device_info import DeviceInfo

        dvt = await self.session.provider()
        try:
            async with DeviceInfo(dvt) as info:
                # only what is read, of what the phone offers: a row per process every
                # interval (hundreds on a phone), of which only the app's is decoded
                offered = set(await info.sysmon_process_attributes())
                attributes = [a for a in samples.PROCESS_ATTRIBUTES if a in offered]
                system = list(await info.sysmon_system_attributes())
            interval = max(1, round(self.process_s * 1000))
            config = raw_tap.sysmontap_config(attributes, system, interval)
            async with raw_tap.raw_tap(dvt, config) as payloads:
                back()
                await self._rows(payloads, attributes, back)
        except Exception as e:
            raise await self.session.failed(e, dvt) from e

    async def _rows(
        self, payloads: AsyncIterator[bytes], attributes: list[str], back: Callable[[], None]
    ) -> None:
        silence = Silence(self.silent_s, self._put)
        try:
            async for payload in payloads:
                silence.heard()
                back()
                pid = self.session.pid
                if pid is None:
                    continue  # no app followed yet: nothing to read
                try:
                    rows = samples.rows(payload, pid)
                except Unreadable as e:
                    self.warnings.add(f"sysmontap: a message anemon cannot read ({e})")
                    continue
                for row in rows:
                    self._list(row, pid)
                    self._read(samples.process_sample(row, attributes, pid))
        finally:
            silence.stop()

    async def _graphics(self, back: Callable[[], None]) -> None:
        from pymobiledevice3.services.dvt.instruments.graphics import Graphics

        dvt = await self.session.provider()
        try:
            async with Graphics(dvt) as graphics:
                back()
                async for sample in graphics:
                    self._read_gpu(samples.gpu_sample(sample, self.session.pid))
        except Exception as e:
            raise await self.session.failed(e, dvt) from e

    def _read_gpu(self, read: samples.Read) -> None:
        """A GPU reading waits for the app's next sample (`_with_gpu`), or goes alone."""
        if read.sample is None:
            self._read(read)
            return
        self._flush_gpu()  # one not taken yet goes alone
        self._gpu = read.sample
        wait = GPU_WAIT * self.process_s
        self._gpu_timer = asyncio.get_running_loop().call_later(wait, self._flush_gpu)

    def _read(self, read: samples.Read) -> None:
        if read.warning:
            self.warnings.add(read.warning)
        elif read.sample is not None:
            self._put(self._with_gpu(read.sample))

    def _with_gpu(self, sample: AppSample) -> AppSample:
        """The app's sample with the GPU reading that waited for it (of the same process)."""
        if self._gpu is None or self._gpu.pid != sample.pid:
            self._flush_gpu()
            return sample
        gpu = self._take_gpu()
        return sample if gpu is None else dataclasses.replace(sample, gpu_pct=gpu.gpu_pct)

    def _flush_gpu(self) -> None:
        gpu = self._take_gpu()
        if gpu is not None:
            self._put(gpu)

    def _take_gpu(self) -> AppSample | None:
        if self._gpu_timer is not None:
            self._gpu_timer.cancel()
        gpu, self._gpu, self._gpu_timer = self._gpu, None, None
        return gpu

    # -- crash reports -----------------------------------------------------------------------

    async def _reports(self, back: Callable[[], None]) -> None:
        from pymobiledevice3.services.crash_reports import CrashReportsManager

        provider = await self.session.connection.developer_provider()
        try:
            async with CrashReportsManager(provider) as manager:
                listed = await _listing(manager)
                seen = self._seen = listed if self._seen is None else self._seen
                back()
                while True:
                    for name in sorted(listed - seen):  # new since the watch began
                        seen.add(name)
                        await self._report(manager, name)
                    await asyncio.sleep(self.poll_s)
                    listed = await _listing(manager)
        except Exception as e:
            raise await self.session.failed(e) from e

    async def _report(self, manager: Any, path: str) -> None:
        name = path.rsplit("/", 1)[-1]
        if not name.endswith(".ips"):
            return
        data = await manager.afc.get_file_contents(path)
        executable = await self.executables.known(self.bundle) if self.executables else ""
        try:
            crash = reports.app_crash(name, data, bundle=self.bundle, pids=self.session.launched,
                                      executable=executable)  # fmt: skip
        except reports.NotAReport as e:
            self.warnings.add(str(e))
            return
        if crash is not None:
            self._put(crash)


class Silence:
    """sysmontap silent for `silent_s` is a gap (begun once, ended by the next row). One timer,
    which moves itself on to `silent_s` after the last row when it fires early: a timer and a
    task per row would wake the loop twice a row more (a row a second, all run long)."""

    def __init__(self, silent_s: float, put: Callable[[AppNews], None]) -> None:
        self.silent_s = silent_s
        self.put = put
        self.loop = asyncio.get_running_loop()
        self.last = self.loop.time()
        self.away = False
        self.timer = self.loop.call_at(self.last + silent_s, self._due)

    def heard(self) -> None:
        self.last = self.loop.time()
        if self.away:
            self.away = False
            self.put(AppGap("sysmontap", "end", "sysmontap back"))
            self.timer = self.loop.call_at(self.last + self.silent_s, self._due)

    def stop(self) -> None:
        self.timer.cancel()

    def _due(self) -> None:
        due = self.last + self.silent_s
        if self.loop.time() < due:
            self.timer = self.loop.call_at(due, self._due)
            return
        self.away = True
        self.put(AppGap("sysmontap", "begin", f"sysmontap silent for {self.silent_s:g} s"))


async def _listing(manager: Any) -> set[str]:
    """The CrashReporter folder's entries as `manager.ls("/")` names them ("/NAME"), in one
    AFC request: `ls` also asks a `stat` of each entry (dozens on a phone, every poll)."""
    return {f"/{name}" for name in await manager.afc.listdir("/") if name}
