"""Arguments several commands share."""

from __future__ import annotations

import argparse
import math
import signal
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from anemon.errors import AnemonError
from anemon.signals import SIGNALS as HELD
from anemon.text import printable

if TYPE_CHECKING:
    from anemon.metrics import Address, Exporter
    from anemon.recording.reader import LineWarning
    from anemon.recording.writer import Mode, Recorder

INTERRUPTED = 130
"""Exit status when the operator stopped a command (Ctrl-C, SIGTERM, SIGHUP, the abort key)."""


class SignalHolder:
    """The Python handler of HELD from start-up until `run_feeds` takes over (and while the
    command finishes after it): the first signal is held, and `run_feeds` acts on it as soon as
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
    parser.add_argument(
        "--layout",
        metavar="NAME|PATH",
        help="dashboard layout (default: default, or compact in a terminal under 100x32)",
    )


def add_record_options(parser: argparse.ArgumentParser, *, force: bool = True) -> None:
    """--record FILE / --no-record: live commands record by default; --append / --force say
    what to do when FILE exists (else it is refused). `force=False`: the command has its own
    --force, which must then also mean "replace"."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--record", metavar="FILE", type=Path, help="where to record the session")
    group.add_argument("--no-record", action="store_true", help="do not record")
    parser.add_argument("--append", action="store_true",
                        help="--record FILE exists: add this session to it")  # fmt: skip
    if force:
        parser.add_argument("--force", action="store_true",
                            help="--record FILE exists: replace it")  # fmt: skip


def record_mode(args: argparse.Namespace, *, force_alone: bool = False) -> Mode:
    """The Recorder's mode from --append / --force; a usage error (exit 2) when they cannot
    apply. `force_alone`: --force without --record is fine (it means more in that command)."""
    append, force = getattr(args, "append", False), getattr(args, "force", False)
    if append and force:
        raise AnemonError("--append and --force exclude each other: add to FILE, or replace it")
    if append and args.record is None:
        raise AnemonError("--append needs --record FILE (the recording to add to)")
    if force and args.record is None and not force_alone:
        raise AnemonError("--force needs --record FILE (the recording to replace)")
    return "append" if append else "replace" if force and args.record is not None else "new"


def open_recorder(
    args: argparse.Namespace,
    name: str,
    header: dict[str, Any] | None = None,
    *,
    force_alone: bool = False,
) -> Recorder | None:
    """The session's recording as the options say: none (--no-record); --record FILE (refused
    when it exists, unless --append or --force); else a new default name made from `name`
    (never one already taken). Claimed now; without `header`, `Recorder.begin` writes it."""
    mode = record_mode(args, force_alone=force_alone)
    if args.no_record:
        return None
    from anemon.recording.writer import Recorder, default_path

    if args.record is None:
        return Recorder(default_path(name), header, unique=True)
    if args.record.suffix == ".gz":  # written line by line, flushed per event: not compressed
        raise AnemonError(
            f"--record {printable(str(args.record))}: recordings are written uncompressed; "
            "name it .jsonl (gzip it afterwards: anemon reads .jsonl.gz)"
        )
    return Recorder(args.record, header, mode=mode)


def recording_note(recorder: Recorder | None) -> str:
    """What the command says on stderr before it starts."""
    if recorder is None:
        return "not recording (--no-record)"
    how = "appending to" if recorder.appending else "recording to"
    return f"{how} {printable(str(recorder.path))}"


def add_metrics_option(parser: argparse.ArgumentParser) -> None:
    """--metrics HOST:PORT: live commands serve OpenMetrics for Prometheus (anemon.metrics)."""
    parser.add_argument(
        "--metrics", metavar="HOST:PORT", type=metrics_address, default=None,
        help="serve OpenMetrics at http://HOST:PORT/metrics (PORT alone: on 127.0.0.1; "
             "port 0: any free one)",
    )  # fmt: skip


def metrics_address(text: str) -> Address:
    """A --metrics value; a usage error (exit 2) when it is not HOST:PORT."""
    from anemon.metrics import parse_address

    try:
        return parse_address(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(
            f"'{printable(text)}': {e}; give HOST:PORT, e.g. 127.0.0.1:9464"
        ) from None


@contextmanager
def serve_metrics(args: argparse.Namespace) -> Iterator[Exporter | None]:
    """The --metrics endpoint, served inside (None without --metrics). An address that
    cannot be bound (a port in use, an unknown host) is one line, exit 2, before anything
    starts; where it serves is said on stderr (with the port chosen for port 0)."""
    address: Address | None = getattr(args, "metrics", None)
    if address is None:
        yield None
        return
    from anemon.metrics import Exporter

    try:
        exporter = Exporter(address)
    except OSError as e:
        raise AnemonError(
            f"--metrics {printable(address.host)}:{address.port}: cannot serve there "
            f"({printable(e.strerror or str(e))}); choose another HOST:PORT (port 0: any free one)"
        ) from None
    print(f"anemon: metrics at {exporter.server.url}", file=sys.stderr)
    try:
        yield exporter
    finally:
        exporter.close()


def write_stdout(text: str) -> None:
    """All of `text` to stdout, flushed, or BrokenPipeError inside main(). A large write into
    a pipe whose reader goes away mid-write (`anemon export X | head -1`) returns short
    without an error (CPython's BufferedWriter): the rest would be lost and the status 0."""
    stream = sys.stdout
    buffer = getattr(stream, "buffer", None)
    if buffer is None:  # not a file (a test's capture): nothing to come back short
        stream.write(text)
        stream.flush()
        return
    stream.flush()
    data = memoryview(text.encode(stream.encoding, stream.errors or "strict"))
    while data:
        data = data[buffer.write(data) :]
    buffer.flush()


def add_warnings_option(parser: argparse.ArgumentParser) -> None:
    """--warnings: every command that reads a SOURCE can list its warnings, line by line."""
    parser.add_argument(
        "--warnings", action="store_true",
        help="list each warning as SOURCE:LINE: what (on stderr)",
    )  # fmt: skip


def report_warnings(
    source: str, count: int, listed: Sequence[LineWarning], *, listing: bool
) -> None:
    """On stderr: a SOURCE's warnings counted in one line, or (`--warnings`) listed, one per
    line as SOURCE:LINE: what, then counted. Nothing when there are none."""
    if not count:
        return
    if not listing:
        first = f", first at line {listed[0].line}" if listed else ""
        print(f"anemon: {source}: {count} warning(s){first} (use --warnings to list them)",
              file=sys.stderr)  # fmt: skip
        return
    from anemon.recording.reader import MAX_LISTED

    for warning in listed:
        print(f"{source}:{warning.line}: {warning.what}", file=sys.stderr)
    cut = f" (the first {len(listed)} listed)" if len(listed) >= MAX_LISTED else ""
    print(f"anemon: {source}: {count} warning(s){cut}", file=sys.stderr)


MAX_SPEED = 10_000.0
"""The fastest finite speed: past ~1e5 the simulator's steps outran the event loop, which
then never ran the signal handlers (a run that Ctrl-C could not stop). Faster is `max`."""


def speed(text: str) -> float:
    """A replay or simulator speed: a positive factor up to MAX_SPEED, or `max` (as fast as
    possible)."""
    if text == "max":
        return float("inf")
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value <= MAX_SPEED:
        raise argparse.ArgumentTypeError(
            f"not a speed: {printable(text)!r} (a number > 0 up to {MAX_SPEED:,.0f}, or max)"
        )
    return value


def poll_seconds(text: str) -> float:
    """--poll S: as a plan's device.poll_s (0.01 to 3600 s: a smaller one spins a core)."""
    from anemon.control.plan import RANGES

    allowed = RANGES[("device", "poll_s")]
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not allowed.low <= value <= allowed.high:
        raise argparse.ArgumentTypeError(
            f"not a poll interval: {printable(text)!r} ({allowed.low:g} to {allowed.high:g} s)"
        )
    return value
