"""`anemon watch PATH` (a mirror something else refreshes) or `anemon watch --device KIND ...`.

With `--device pymobiledevice3`, device power is read every `--power-s` and the phone can be
reached over the network (`--connect network --host H`) instead of through usbmuxd, so the cable
can come out; the bench app (launched by someone else) is sampled over DVT every `--process-s`
(0: not at all) and its exit seen (feeds/app.py). Ends on SIGINT/SIGTERM/SIGHUP (in the
dashboard too, and from the first moments after start-up): pending lines read, recording
closed, terminal restored, exit 0.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from anemon.cli.common import (
    add_metrics_option,
    add_record_options,
    add_view_options,
    poll_seconds,
    serve_metrics,
)
from anemon.devices import BACKENDS, REAL_KINDS
from anemon.devices.base import CONNECTIONS
from anemon.errors import AnemonError, MissingSourceError
from anemon.paths import same_file
from anemon.text import printable

if TYPE_CHECKING:
    from anemon.feeds.device import OnDevice
    from anemon.feeds.live import LiveFeed
    from anemon.feeds.mirror import MirrorFeed
    from anemon.pipeline import Pipeline


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("watch", help="follow a mirrored bench log live")
    parser.add_argument("path", type=Path, nargs="?", metavar="PATH", help="the local mirror")
    parser.add_argument(
        "--poll",
        type=poll_seconds,
        default=None,
        metavar="S",
        help="re-check every S s (0.01 to 3600)",
    )
    device = parser.add_argument_group("mirroring the container log from a device")
    device.add_argument("--device", choices=REAL_KINDS, help="the backend that pulls the log")
    device.add_argument(
        "--id", default="", metavar="UDID", help="which device (default: the only one)"
    )
    device.add_argument("--bundle", metavar="ID", help="the bench app's bundle id")
    device.add_argument("--log", metavar="CONTAINER_PATH", help="the log's path in the container")
    device.add_argument("--mirror", type=Path, metavar="PATH", help="keep the local mirror here")
    device.add_argument(
        "--console", metavar="PROCESS",
        help="read the app's console output (pymobiledevice3 only) instead of mirroring --log",
    )  # fmt: skip
    device.add_argument(
        "--connect", choices=CONNECTIONS, default=None,
        help="pymobiledevice3: over the USB cable (usb, the default) or over the network (Wi-Fi)",
    )  # fmt: skip
    device.add_argument(
        "--host", default="", metavar="H",
        help="the iPhone's network address (HOST or HOST:PORT); implies --connect network",
    )  # fmt: skip
    device.add_argument(
        "--power-s", type=_positive, default=1.0, metavar="S",
        help="read device power every S seconds (pymobiledevice3; default 1)",
    )  # fmt: skip
    device.add_argument(
        "--process-s", type=_process_seconds, default=1.0, metavar="S",
        help="sample the bench app's CPU, memory and GPU every S seconds and see its exit "
             "(pymobiledevice3, over DVT; 0: not at all; default 1)",
    )  # fmt: skip
    add_view_options(parser)
    add_record_options(parser)
    add_metrics_option(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """A signal is how a watch ends (exit 0); a second one while start-up hangs too."""
    try:
        return _watch(args)
    except KeyboardInterrupt:
        return 0


def _watch(args: argparse.Namespace) -> int:
    _check(args)
    if not args.headless:
        from anemon import ui

        ui.resolve(
            args.layout or "default"
        )  # a bad layout is a usage error before anything is recorded
    with serve_metrics(args) as metrics:  # bound first: a port in use claims no recording
        feed = _device_feed(args) if args.device else _mirror_feed(args)
        if metrics is not None:
            # the phone's --id, else the backend; a mirror's device is its file's name
            device = (args.id or args.device) if args.device else args.path.name
            metrics.watch(feed.subscribe, device, feed.tag)
        print(_recording_note(feed), file=sys.stderr)
        from anemon.feeds.runs import Runs
        from anemon.headless import HeadlessView, make_console, run_headless

        console = make_console()
        if args.headless:
            run_headless(Runs.one(feed), console)
        else:
            ui.launch(Runs.one(feed), args.layout)
        HeadlessView(console).finish(feed.session, title=feed.title)  # kept in the scrollback
    return 0


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"not a number of seconds > 0: {text!r}")
    return value


def _process_seconds(text: str) -> float:
    """0 (the app is not sampled), or seconds as a plan's `device.process_s` takes them."""
    from anemon.control.plan import RANGES

    bounds = RANGES[("device", "process_s")]
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not (value == 0 or bounds.low <= value <= bounds.high):
        raise argparse.ArgumentTypeError(
            f"not 0 nor a number of seconds {bounds.low:g} to {bounds.high:g}: {text!r}"
        )
    return value


def _check(args: argparse.Namespace) -> None:
    if args.console and args.device != "pymobiledevice3":
        raise AnemonError("--console needs --device pymobiledevice3 (devicectl has no console)")
    if args.connect == "usb" and args.host:
        raise AnemonError("--host is for --connect network (usb goes through usbmuxd)")
    args.connect = args.connect or ("network" if args.host else "usb")
    networked = [kind for kind in REAL_KINDS if "network" in BACKENDS[kind].connections]
    if args.connect == "network" and args.device not in networked:
        raise AnemonError(f"--connect network / --host need --device {' or '.join(networked)}")
    if args.connect == "network" and not args.host:
        raise AnemonError("--connect network needs --host H: the iPhone's address (HOST[:PORT])")
    if args.device:
        if args.path is not None or not args.bundle or not (args.log or args.console):
            raise AnemonError(
                "watch --device KIND needs --bundle ID and --log PATH (or --console PROCESS), "
                "and no PATH"
            )
        return
    if args.path is None:
        raise AnemonError("watch needs a PATH (the mirrored log), or --device KIND --bundle --log")
    if args.path.is_dir():
        raise AnemonError(f"{args.path}: is a directory; give the mirrored log file")
    if args.record is not None and same_file(args.record, args.path):
        # appended to, it would be read back as new lines, without end; replaced, the log is lost
        raise AnemonError(
            f"{printable(str(args.record))}: is the log being watched; --record another file"
        )
    if args.path.exists() and not args.path.is_file():
        # A FIFO (or a device) has no offset to come back to and cannot be re-read: watch
        # follows a file something refreshes; a pipe's lines are read whole by summary/replay.
        raise AnemonError(
            f"{args.path}: not a regular file (a FIFO or a device); watch follows a mirrored "
            "log file: read a pipe with `anemon summary` or `anemon replay` instead"
        )
    from anemon.recording.reader import check_text

    try:
        check_text(args.path)  # a binary file is refused before anything starts
    except MissingSourceError:  # not mirrored yet, or deleted to be written again just now
        print(f"anemon: {printable(str(args.path))} does not exist yet; waiting for it "
              "(Ctrl-C to stop)", file=sys.stderr)  # fmt: skip


def _pipeline(args: argparse.Namespace, name: str, source: str) -> Pipeline:
    from anemon.cli.common import open_recorder
    from anemon.pipeline import Pipeline
    from anemon.recording.writer import make_header

    return Pipeline(recorder=open_recorder(args, name, make_header(source=source)))


def _mirror_feed(args: argparse.Namespace) -> MirrorFeed:
    from anemon.feeds.mirror import MirrorFeed

    pipeline = _pipeline(args, args.path.stem, str(args.path))
    return MirrorFeed(args.path, pipeline, poll_s=args.poll or 1.0)


def _device_feed(args: argparse.Namespace) -> OnDevice:
    import tempfile

    from anemon.clock import RealClock
    from anemon.control.arm import EXIT_GRACE_S
    from anemon.devices import backend
    from anemon.devices.base import DeviceSpec
    from anemon.feeds.device import ConsoleFeed, DeviceFeed
    from anemon.paths import safe_name

    poll_s = args.poll or 2.0
    sampled = args.process_s > 0
    spec = DeviceSpec(args.device, args.id, poll_s=poll_s, connect=args.connect, host=args.host,
                      power_s=args.power_s,
                      process_s=args.process_s if sampled else DeviceSpec.process_s)  # fmt: skip
    device = backend(args.device).make(spec, RealClock())
    # as a run's: the log's last pulls may still bring the END after the app's exit
    grace = max(EXIT_GRACE_S, 2.5 * poll_s) if sampled else None
    if args.console:
        source = f"{args.device}:{args.bundle}/console:{args.console}"
        pipeline = _pipeline(args, args.console, source)
        return ConsoleFeed(device, args.bundle, args.console, pipeline, app_grace_s=grace)
    log_name = safe_name(Path(args.log).name, "bench.log")  # `--log Documents/..` stays inside
    mirror = args.mirror or Path(tempfile.mkdtemp(prefix="anemon-mirror-")) / log_name
    name = Path(args.log).stem
    pipeline = _pipeline(args, name, f"{args.device}:{args.bundle}/{args.log}")
    return DeviceFeed(device, args.bundle, args.log, mirror, pipeline, app_grace_s=grace)


def _recording_note(feed: LiveFeed) -> str:
    from anemon.cli.common import recording_note

    return recording_note(feed.pipeline.recorder)
