"""The `devicectl` backend: Apple's `xcrun devicectl` (Xcode 15+) as an asyncio subprocess.

Every call is an argument list (never a shell) with `--json-output <fresh temp file>`, read
after the process exits: stdout carries only human text such as install progress (`NN%`).
Failures become typed DeviceErrors (devicectl_errors.py). devicectl has no telemetry and no
byte-range reads, so the container log is copied whole every `poll_s` into a local mirror,
whose new lines the MirrorTailer reads (notes/devicectl.md, DESIGN.md "Devices").
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from anemon.devices.base import DeviceError, DeviceInfo, Installer, Telemetry
from anemon.devices.devicectl_errors import (
    XCRUN_MISSING,
    ContainerFileMissing,
    failure,
    to_error,
)
from anemon.devices.devicectl_json import (
    CoreDevice,
    Document,
    LockState,
    MalformedDocument,
    RunningProcess,
    load,
    parse_devices,
    parse_installed_bundles,
    parse_launch_pid,
    parse_lock_state,
    parse_processes,
)
from anemon.sources.items import LogGap, LogItem
from anemon.sources.mirror import MirrorTailer

CALL_TIMEOUT_S = 120.0
INSTALL_TIMEOUT_S = 3600.0  # a multi-GB app over Wi-Fi takes many minutes


@dataclass(frozen=True, slots=True)
class _Call:
    """One devicectl invocation: subcommand words, options, then positionals."""

    words: tuple[str, ...]
    options: tuple[str, ...] = ()
    positionals: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return " ".join(self.words)

    def argv(self, xcrun: str, json_path: Path) -> list[str]:
        # Options (the JSON path included) before positionals: devicectl passes whatever
        # follows a launch's bundle id to the app as its arguments.
        head = [xcrun, "devicectl", *self.words, "--json-output", str(json_path)]
        return [*head, *self.options, *self.positionals]


class DevicectlDevice(Installer):
    """A real iPhone driven through `xcrun devicectl`."""

    kind = "devicectl"

    def __init__(
        self,
        device_id: str = "",
        *,
        poll_s: float = 2.0,
        xcrun: str = "xcrun",
        call_timeout_s: float = CALL_TIMEOUT_S,
        install_timeout_s: float = INSTALL_TIMEOUT_S,
    ) -> None:
        self._wanted = device_id
        self._poll_s = poll_s
        self._xcrun = xcrun
        self._call_timeout_s = call_timeout_s
        self._install_timeout_s = install_timeout_s
        self._device: CoreDevice | None = None
        self._workdir: Path | None = None
        self._serial = itertools.count()
        self._disturbed = ""  # "an install" / "a kill" since the last successful launch
        self.installed: list[str] = []
        """Bundle ids of the last install."""

    # -- the Device protocol -------------------------------------------------------------

    async def connect(self) -> DeviceInfo:
        device = self._pick(await self.list_devices())
        self._device = device
        return DeviceInfo(
            kind=self.kind,
            udid=device.udid or device.identifier,
            name=device.name,
            os=device.os_version,
            model=device.marketing_name or device.product_type,
        )

    async def install(self, app: Path) -> None:
        call = _Call(("device", "install", "app"), await self._target(), (str(app),))
        document = await self._run(call, timeout_s=self._install_timeout_s)
        self.installed = parse_installed_bundles(document)
        self._disturbed = "an install"

    async def launch(self, bundle: str, env: Mapping[str, str]) -> int:
        """Launch `bundle` with `env` (never `--console`: console launches get refused)."""
        options = (
            *await self._target(),
            "--terminate-existing",
            "--environment-variables",
            json.dumps(dict(env), ensure_ascii=False),
        )
        call = _Call(("device", "process", "launch"), options, (bundle,))
        pid = parse_launch_pid(await self._run(call, bundle=bundle))
        self._disturbed = ""
        return pid

    async def terminate(self, pid: int) -> None:
        """Stop `pid`; a process that already exited is not an error."""
        options = (*await self._target(), "--pid", str(pid))
        self._disturbed = "a kill"
        try:
            await self._run(_Call(("device", "process", "terminate"), options))
        except DeviceError:
            # The app exits on its own after END: only fail if it is in fact still running.
            if any(process.pid == pid for process in await self.processes()):
                raise

    async def follow_log(
        self, bundle: str, path: str, mirror: Path
    ) -> AsyncIterator[list[LogItem]]:
        """Every `poll_s`: copy the container file into `mirror`, then yield its new lines.

        A file not there yet (the app has not started) is waited for silently. A copy that
        fails for any other reason (the phone unplugged, say) opens a LogGap once, closed by
        the next copy that works: the log on the phone survives and is read on reconnect.
        """
        mirror = Path(mirror)
        tailer = MirrorTailer(mirror, poll_s=self._poll_s)
        gap = False
        while True:
            batch: list[LogItem] = []
            try:
                await self.copy_from(bundle, path, mirror)
            except ContainerFileMissing:
                pass
            except DeviceError as e:
                if not gap:
                    gap = True
                    batch.append(LogGap("begin", str(e)))
            else:
                if gap:
                    gap = False
                    batch.append(LogGap("end", "the device answers again"))
                batch.extend(tailer.check())
            if batch:
                yield batch
            await asyncio.sleep(self._poll_s)

    async def telemetry(self) -> Telemetry | None:
        return None  # devicectl reads no battery, disk or temperature

    async def close(self) -> None:
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None

    # -- more devicectl capabilities -------------------------------------------------------

    async def list_devices(self) -> list[CoreDevice]:
        """The physical devices CoreDevice knows (simulated ones filtered out)."""
        document = await self._run(_Call(("list", "devices")))
        return [device for device in parse_devices(document) if device.physical]

    async def copy_from(self, bundle: str, source: str, destination: Path) -> None:
        """Copy `source` of the app's data container to `destination`, replacing it whole.

        devicectl may not overwrite an existing file, and a reader must never see half a copy:
        copy to a fresh name beside it, then rename into place.
        """
        destination = Path(destination)
        destination.parent.mkdir(parents=True, exist_ok=True)
        part = destination.with_name(f".{destination.name}.{os.getpid()}.{next(self._serial)}")
        options = (
            *await self._target(),
            "--domain-type",
            "appDataContainer",
            "--domain-identifier",
            bundle,
            "--source",
            source,
            "--destination",
            str(part),
        )
        try:
            await self._run(_Call(("device", "copy", "from"), options), bundle=bundle)
            os.replace(part, destination)
        finally:
            with contextlib.suppress(FileNotFoundError):
                part.unlink()

    async def processes(self) -> list[RunningProcess]:
        call = _Call(("device", "info", "processes"), await self._target())
        return parse_processes(await self._run(call))

    async def lock_state(self) -> LockState:
        call = _Call(("device", "info", "lockState"), await self._target())
        return parse_lock_state(await self._run(call))

    # -- internals -------------------------------------------------------------------------

    def _pick(self, devices: Sequence[CoreDevice]) -> CoreDevice:
        if self._wanted:
            for device in devices:
                if device.matches(self._wanted):
                    return device
            raise DeviceError(
                f"no attached iPhone named {self._wanted!r}: `xcrun devicectl list devices` "
                "shows what is attached"
            )
        if len(devices) == 1:
            return devices[0]
        if not devices:
            raise DeviceError(
                "no iPhone attached: plug it in, unlock it and trust this Mac (Developer Mode on)"
            )
        names = ", ".join(f"{d.name} ({d.udid or d.identifier})" for d in devices)
        raise DeviceError(f"several iPhones attached ({names}): pick one with the device id")

    async def _target(self) -> tuple[str, str]:
        if self._device is None and not self._wanted:
            await self.connect()
        ident = self._device.identifier if self._device is not None else self._wanted
        return ("--device", ident)

    async def _run(self, call: _Call, *, bundle: str = "", timeout_s: float = 0.0) -> Document:
        """Run one call; its JSON document, or the typed error for its failure."""
        json_path = self._json_path()
        try:
            returncode, stderr = await self._exec(
                call.argv(self._xcrun, json_path), timeout_s or self._call_timeout_s, call
            )
            document = _read(json_path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                json_path.unlink()
        if returncode == 0 and document is not None and document.outcome != "failed":
            return document
        if returncode == 0 and document is None:
            raise DeviceError(f"devicectl {call.name} wrote no JSON document: is Xcode 15+ used?")
        error = document.error if document is not None else None
        fail = failure(error, stderr, command=call.name)
        device = self._wanted or (self._device.name if self._device else "")
        raise to_error(fail, device=device, bundle=bundle, after=self._disturbed)

    async def _exec(self, argv: list[str], timeout_s: float, call: _Call) -> tuple[int, str]:
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,  # progress text: read and dropped
                stderr=asyncio.subprocess.PIPE,
            )
        except FileNotFoundError as e:
            raise DeviceError(XCRUN_MISSING) from e
        try:
            _stdout, stderr = await asyncio.wait_for(process.communicate(), timeout_s)
        except TimeoutError as e:
            raise DeviceError(
                f"devicectl {call.name} did not finish within {timeout_s:g} s", transient=True
            ) from e
        finally:
            # Cancelled (an abort) or timed out: never leave a devicectl running behind us.
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        assert process.returncode is not None
        return process.returncode, stderr.decode("utf-8", errors="replace")

    def _json_path(self) -> Path:
        if self._workdir is None:
            self._workdir = Path(tempfile.mkdtemp(prefix="anemon-devicectl-"))
        return self._workdir / f"call-{next(self._serial)}.json"


def _read(path: Path) -> Document | None:
    try:
        return load(path)
    except MalformedDocument:
        return None  # stderr still says what went wrong
