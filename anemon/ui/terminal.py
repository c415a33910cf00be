"""A terminal that hangs up (its window closed, tmux killed, an SSH session dropped) must not
leave the dashboard running.

Textual writes to the terminal from a thread fed by a bounded queue. A write to a terminal that
has hung up fails (EIO), the thread dies of it, the queue fills, and the app's own shutdown
then waits forever to queue its last escape codes: the process lingered, holding its
recording open, and a SIGTERM no longer ended it. Here a failed write marks the terminal gone
and later ones are dropped: the thread lives, and the SIGHUP that came with the hang-up ends
the session as any signal does (recording closed, exit status as documented).

Its input thread sleeps between keys (`textual_compat.read_input`): Textual's wakes ten times
a second to look at its exit event, which is set here through `WakingEvent`.
"""

from __future__ import annotations

import contextlib
import os
import threading
from typing import IO, Any

from textual.driver import Driver
from textual.drivers.linux_driver import LinuxDriver

from anemon.ui.textual_compat import read_input, wrap_output


class GoneTerminal:
    """The terminal's output, dropping what is written once a write has failed."""

    def __init__(self, file: IO[str]) -> None:
        self.file = file
        self.gone = False

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                self.file.write(text)
            except OSError:
                self.gone = True
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self.file.flush()
            except OSError:
                self.gone = True

    def fileno(self) -> int:
        return self.file.fileno()

    def isatty(self) -> bool:
        return self.file.isatty()


class WakingEvent(threading.Event):
    """The driver's exit event, with a pipe the input thread waits on: readable while set.
    Left unread until cleared, it wakes every input thread (a SIGCONT, as a hang-up sends,
    starts a second one beside the first)."""

    def __init__(self) -> None:
        super().__init__()
        self.read_end, self.write_end = os.pipe()
        for end in (self.read_end, self.write_end):
            os.set_blocking(end, False)

    def set(self) -> None:
        super().set()
        with contextlib.suppress(BlockingIOError):  # full: readable already
            os.write(self.write_end, b"\0")

    def clear(self) -> None:
        super().clear()
        with contextlib.suppress(BlockingIOError):  # drained
            while os.read(self.read_end, 4096):
                pass

    def close(self) -> None:
        os.close(self.read_end)
        os.close(self.write_end)


class HangUpSafeDriver(LinuxDriver):
    """Textual's driver for POSIX terminals, writing through `GoneTerminal`, its input
    thread woken by a key or its exit only."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        wrap_output(self, GoneTerminal)
        self.exit_event = self.waking = WakingEvent()

    def run_input_thread(self) -> None:
        read_input(self, self.waking.read_end)

    def close(self) -> None:
        super().close()
        self.waking.close()


def hang_up_safe(driver: type[Driver]) -> type[Driver]:
    """The driver Textual chose, made safe if it is the POSIX terminal's (a browser's, from
    `anemon serve`, or Windows' are left as they are)."""
    return HangUpSafeDriver if driver is LinuxDriver else driver
