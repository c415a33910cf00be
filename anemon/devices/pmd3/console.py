"""The bench app's console lines through os_trace_relay (pymobiledevice3's `OsTraceService`).

An alternative to mirroring the container log: the app logs each line (os_log / Logger /
NSLog; Swift `print` goes to stdout, not here) and the host reads the phone's live console,
keeping only the entries of the app's process. os_trace_relay is a plain lockdown service:
no Developer Mode, disk image or iOS 17 tunnel needed.

What mirroring gives and this does not: the console is live only, so lines logged before the
stream starts, or while the phone is unplugged, are never seen. An unplug therefore ends the
stream with DeviceGone instead of a gap and a backfill.
"""

from __future__ import annotations

import contextlib
import posixpath
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from anemon.devices.base import DeviceGone

if TYPE_CHECKING:
    from anemon.devices.pmd3.connection import Pmd3Connection

ALL_PROCESSES = -1


def process_name(entry: Any) -> str:
    """The process an entry comes from: its executable's name (`filename` is its path).

    Not `image_name`: that is the image the log call was made from, e.g. Foundation for NSLog.
    """
    return posixpath.basename(str(entry.filename))


def message_lines(message: str) -> list[str]:
    """An entry's message as log lines (an app may log several lines at once)."""
    return message.removesuffix("\n").split("\n")


async def console_lines(connection: Pmd3Connection, process: str) -> AsyncIterator[str]:
    """Every line `process` logs from now on, in order; ends when the consumer closes it.

    Raises DeviceGone when the phone goes away (the stream cannot resume without losing lines).
    """
    from pymobiledevice3.services.os_trace import OsTraceService

    service = OsTraceService(await connection.lockdown())
    try:
        async with contextlib.aclosing(service.syslog(pid=ALL_PROCESSES)) as entries:
            async for entry in entries:
                if process_name(entry) == process:
                    for line in message_lines(entry.message):
                        yield line
    except Exception as e:
        error = connection.error(e)
        if not isinstance(error, DeviceGone):
            raise error from e
        await connection.drop()
        raise DeviceGone(
            f"{error}: the console stream of {process} ended (lines logged meanwhile are lost)",
            transient=True,
        ) from e
    finally:
        with contextlib.suppress(Exception):
            await service.close()
