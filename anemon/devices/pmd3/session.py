"""The run's one DVT connection: launch, kill, the app's exits, a held condition, and the
provider the watch's channels (sysmontap, graphics) open over.

One `DvtProvider` is held from the first use to `close`, not opened per launch: the phone
reports a process's termination on the connection that launched it, and a condition
(ConditionInducer) ends when the connection that set it closes. A failure drops it; the next
use reconnects (`provider`, the one place that does) and sets the held condition again.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from anemon.devices.base import AppExit, DeviceError, DeviceGone, exit_reason
from anemon.devices.pmd3.errors import launch_refused

if TYPE_CHECKING:
    from anemon.devices.pmd3.connection import Pmd3Connection

TERMINATED = "processWithPID:terminatedWithExitCode:orCrashingSignal:"
"""What the phone sends on the launching connection when a process ends (the client asks for
it: the terminationCallback capability)."""


def _exit_service(sink: asyncio.Queue[AppExit]) -> Any:
    """ProcessControl's channel, with the termination message queued (pymobiledevice3 only
    logs it): its documented way to handle a device's message, `dtx_on_invoke`."""
    from pymobiledevice3.dtx import dtx_on_invoke
    from pymobiledevice3.services.dvt.instruments.process_control import (
        ProcessControlService,
    )

    class ExitingProcessControl(ProcessControlService):
        @dtx_on_invoke(TERMINATED)  # in place of the library's handler, which only logs
        async def on_terminated(self, pid: Any, code: Any, signal: Any) -> None:
            pid = getattr(pid, "value", pid)
            if isinstance(pid, int) and not isinstance(pid, bool):
                reason = exit_reason(getattr(code, "value", code), getattr(signal, "value", signal))
                sink.put_nowait(AppExit(pid, reason))

    return ExitingProcessControl


class DvtSession:
    """DVT over one connection for as long as the backend is open."""

    def __init__(self, connection: Pmd3Connection) -> None:
        self.connection = connection
        self.exits: asyncio.Queue[AppExit] = asyncio.Queue()
        """Termination messages, as they come."""
        self.launched: list[int] = []
        """Every process launched (or followed, `follow`), in order: the last is the one the
        watch follows, and a report naming any of them is the app's."""
        self.condition = ""
        """The condition profile held (set again on every reconnection)."""
        self._dvt: Any = None
        self._pc: Any = None
        self._inducer: Any = None
        self._lock = asyncio.Lock()

    async def provider(self) -> Any:
        """The connected DvtProvider, (re)connected here and nowhere else."""
        async with self._lock:
            if self._dvt is None:
                await self._open()
            return self._dvt

    async def _open(self) -> None:
        from pymobiledevice3.services.dvt.instruments.dvt_provider import DvtProvider
        from pymobiledevice3.services.dvt.instruments.process_control import ProcessControl

        dvt = DvtProvider(await self.connection.developer_provider())
        try:
            await dvt.connect()
            service = await dvt.dtx.open_channel(_exit_service(self.exits))
            self._pc = ProcessControl(dvt, service)
            self._dvt = dvt
            if self.condition:
                await self._induce(self.condition)
        except Exception as e:
            await self._forget(dvt)
            raise await self.failed(e) from e

    async def failed(
        self, e: BaseException, dvt: Any = None, bundle: str | None = None
    ) -> DeviceError:
        """The DeviceError for `e`; the connection it came from (`dvt`, None: the current one)
        is dropped when the phone went away or the DTX stream is confused (the next use
        reconnects), not for a refusal (an NSError): the connection is sound."""
        from pymobiledevice3.dtx.exceptions import DTXNSCodingError, DTXProtocolError

        error = self.connection.error(e, bundle=bundle)
        gone = isinstance(error, DeviceGone)
        if gone or isinstance(e, DTXProtocolError | DTXNSCodingError):
            await self._forget(dvt if dvt is not None else self._dvt)
        if gone:
            await self.connection.drop()
        return error

    async def launch(self, bundle: str, env: Mapping[str, str]) -> int:
        """Start `bundle` with `env` (replacing a running instance); its pid."""
        from pymobiledevice3.dtx.exceptions import DTXNsError

        await self.provider()
        dvt, pc = self._dvt, self._pc
        try:
            pid = int(await pc.launch(bundle, environment=dict(env), kill_existing=True))
        except (AssertionError, DTXNsError) as e:
            raise launch_refused(e, bundle) from e
        except Exception as e:
            raise await self.failed(e, dvt, bundle) from e
        self.launched.append(pid)
        return pid

    async def kill(self, pid: int) -> None:
        await self.provider()
        dvt, pc = self._dvt, self._pc
        try:
            await pc.kill(pid)
        except Exception as e:
            raise await self.failed(e, dvt) from e

    async def running_pid(self, bundle: str) -> int:
        """The pid the phone runs `bundle` as now (0: none)."""
        await self.provider()
        dvt, pc = self._dvt, self._pc
        try:
            return int(await pc.process_identifier_for_bundle_identifier(bundle) or 0)
        except Exception as e:
            raise await self.failed(e, dvt, bundle) from e

    def follow(self, pid: int) -> None:
        """Follow `pid`, a process of the app someone else launched (a watch), as if launched
        here: the watch samples it, and a report naming it is the app's."""
        self.launched.append(pid)

    @property
    def pid(self) -> int | None:
        """The process last launched (or followed)."""
        return self.launched[-1] if self.launched else None

    # -- a condition held for the run --------------------------------------------------------

    async def hold(self, profile: str) -> None:
        """Force `profile` (ConditionInducer) on this connection, and again after a reconnection."""
        await self.provider()
        try:
            await self._induce(profile)
        except DeviceError:
            raise
        except Exception as e:
            raise await self.failed(e) from e
        self.condition = profile

    async def _induce(self, profile: str) -> None:
        from pymobiledevice3.exceptions import PyMobileDevice3Exception
        from pymobiledevice3.services.dvt.instruments.condition_inducer import ConditionInducer

        inducer = ConditionInducer(self._dvt)
        await inducer.connect()
        try:
            await inducer.set(profile)
        except PyMobileDevice3Exception as e:
            raise DeviceError(f"the iPhone has no condition profile {profile!r}") from e
        self._inducer = inducer

    async def release(self) -> bool:
        """Clear the held condition; whether one was held."""
        held, self.condition = self.condition, ""
        inducer, self._inducer = self._inducer, None
        if inducer is not None:
            try:
                await inducer.clear()
            except Exception as e:
                raise await self.failed(e) from e
        return bool(held)

    # -- closing ---------------------------------------------------------------------------

    async def _forget(self, dvt: Any) -> None:
        """Close `dvt` and, if it is the current connection, forget it (a stream failing on an
        old connection must not close the new one)."""
        if dvt is not None and dvt is self._dvt:
            self._dvt = self._pc = self._inducer = None
        if dvt is not None:
            with contextlib.suppress(Exception):
                await dvt.close()

    async def close(self) -> None:
        """Close the connection (the phone clears a condition it set)."""
        await self._forget(self._dvt)
