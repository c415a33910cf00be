"""`xcrun devicectl` as an asyncio subprocess: the devicectl backend's one connection object.

`Devicectl` owns everything a call needs: the xcrun path, the device it targets (picked once
from `list devices`), the timeouts and the temporary directory the JSON documents are written
to. Every call is an argument list (never a shell) with `--json-output <fresh temp file>`,
read after the process exits: stdout carries only human text such as install progress
(`NN%`). Failures become typed DeviceErrors (errors.py; docs/devices.md, "xcrun devicectl").
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from anemon.devices.base import DeviceError
from anemon.devices.devicectl.errors import XCRUN_MISSING, failure, to_error
from anemon.devices.devicectl.json import (
    CoreDevice,
    Document,
    MalformedDocument,
    load,
    parse_devices,
)

CALL_TIMEOUT_S = 120.0


@dataclass(frozen=True, slots=True)
class Call:
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


class Devicectl:
    """Runs devicectl calls against one device: `wanted` (UUID, UDID or name), or the only one
    attached."""

    def __init__(
        self, wanted: str = "", *, xcrun: str = "xcrun", call_timeout_s: float = CALL_TIMEOUT_S
    ) -> None:
        self.wanted = wanted
        self.xcrun = xcrun
        self.call_timeout_s = call_timeout_s
        self.device: CoreDevice | None = None
        """The device picked by `connect()`."""
        self._workdir: Path | None = None
        self._serial = itertools.count()

    async def list_devices(self) -> list[CoreDevice]:
        """The physical devices CoreDevice knows (simulated ones filtered out)."""
        document = await self.run(Call(("list", "devices")))
        return [device for device in parse_devices(document) if device.physical]

    async def connect(self) -> CoreDevice:
        """Pick the device (again) from what is attached now."""
        self.device = self._pick(await self.list_devices())
        return self.device

    async def target(self) -> tuple[str, str]:
        """The `--device` option of a call (connecting first when no device was named)."""
        if self.device is None and not self.wanted:
            await self.connect()
        ident = self.device.identifier if self.device is not None else self.wanted
        return ("--device", ident)

    def serial(self) -> int:
        """A number never handed out before by this object (for fresh file names)."""
        return next(self._serial)

    async def run(
        self, call: Call, *, bundle: str = "", after: str = "", timeout_s: float = 0.0
    ) -> Document:
        """Run one call; its JSON document, or the typed error for its failure (`bundle` and
        `after` are for the message, see errors.to_error)."""
        json_path = self._json_path()
        try:
            returncode, stderr = await self._exec(
                call.argv(self.xcrun, json_path), timeout_s or self.call_timeout_s, call
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
        device = self.wanted or (self.device.name if self.device else "")
        raise to_error(fail, device=device, bundle=bundle, after=after)

    async def close(self) -> None:
        """Remove the JSON documents' directory (a later call makes a new one)."""
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None

    def _pick(self, devices: Sequence[CoreDevice]) -> CoreDevice:
        if self.wanted:
            for device in devices:
                if device.matches(self.wanted):
                    return device
            raise DeviceError(
                f"no attached iPhone named {self.wanted!r}: `xcrun devicectl list devices` "
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

    async def _exec(self, argv: list[str], timeout_s: float, call: Call) -> tuple[int, str]:
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
        return self._workdir / f"call-{self.serial()}.json"


def _read(path: Path) -> Document | None:
    try:
        return load(path)
    except MalformedDocument:
        return None  # stderr still says what went wrong
