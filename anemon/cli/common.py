"""Arguments several commands share."""

from __future__ import annotations

import argparse
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

INTERRUPTED = 130
"""Exit status when the operator stopped a command (Ctrl-C, SIGTERM, SIGHUP, the abort key)."""
HELD = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)
"""The signals that end a command (anemon.feeds.lifecycle.SIGNALS, without importing asyncio)."""


class SignalHolder:
    """The Python handler of HELD from start-up until `run_feed` takes over (and while the
    command finishes after it): the first signal is held, and `run_feed` acts on it as soon as
    its own handlers are in place (`take`), so a signal in the first moments ends the command
    exactly as one a moment later (feed stopped, pending lines read, abort recorded, recording
    closed, terminal restored). A second one before that (start-up hangs, the operator
    insists) interrupts at once: KeyboardInterrupt."""

    def __init__(self) -> None:
        self.held: list[signal.Signals] = []

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if self.held:
            raise KeyboardInterrupt
        self.held.append(signal.Signals(signum))

    def take(self) -> list[signal.Signals]:
        taken, self.held = self.held, []
        return taken


@contextmanager
def hold_signals() -> Iterator[SignalHolder]:
    """HELD are held (SignalHolder) inside; the previous handlers are back after. Nothing is
    held where Python cannot set handlers (not the main thread)."""
    holder = SignalHolder()
    previous = {}
    for sig in HELD:
        try:
            previous[sig] = signal.signal(sig, holder)
        except (ValueError, OSError):
            continue
    try:
        yield holder
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def add_view_options(parser: argparse.ArgumentParser) -> None:
    """--headless and --layout: every command that shows a dashboard takes them."""
    parser.add_argument(
        "--headless", action="store_true", help="plain progress on the terminal, no dashboard"
    )
    parser.add_argument("--layout", metavar="NAME|PATH", default="default", help="dashboard layout")


def add_record_options(parser: argparse.ArgumentParser) -> None:
    """--record FILE / --no-record: live commands record by default."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--record", metavar="FILE", type=Path, help="where to record the session")
    group.add_argument("--no-record", action="store_true", help="do not record")


def speed(text: str) -> float:
    """A replay or simulator speed: a positive factor, or `max` (as fast as possible)."""
    if text == "max":
        return float("inf")
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a speed: {text!r} (a number > 0, or max)") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"not a speed: {text!r} (a number > 0, or max)")
    return value
