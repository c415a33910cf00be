"""`anemon devices [--backend KIND|all] [--json]`: attached devices and what the host reads.

Per device: name, udid, OS, battery %, charging, battery temperature, device power, whether
the phone publishes its own system load (energy with the cable in), free and total disk, as
each backend's lister (`anemon.devices.Backend.list_attached`) reports them.
devicectl reads none of these; for power, the table's column and the JSON's `power_note` say
so ("not readable with devicectl"). With `all`, a backend that cannot answer
(no usbmuxd, no xcrun) is reported as unavailable instead of failing the command; asked for by
name, its error is the command's error. At the terminal's width no name, udid or number is
cut: the least important columns are dropped first and named under the table.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from anemon.cli.common import write_stdout
from anemon.devices import BACKENDS, DEVICE_KINDS, reads_power
from anemon.devices.base import DeviceError, DeviceReport, Telemetry
from anemon.text import printable

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult
    from rich.table import Table

    from anemon.analysis.render import LinesTable

LISTED = tuple(sorted(DEVICE_KINDS, key=lambda kind: not reads_power(kind)))
"""In the order the command lists them: the backends that read the phone first (devicectl
reads nothing of it)."""


@dataclass(frozen=True, slots=True)
class DeviceRow:
    backend: str
    name: str
    udid: str
    os: str
    model: str
    battery_percent: float | None
    charging: bool | None
    plugged: bool | None
    temperature_c: float | None
    power_w: float | None
    """Device power (battery current x voltage); while charging, the charger's."""
    free_gb: float | None
    total_gb: float | None
    load_w: float | None = None
    """The phone's own system load (PowerTelemetryData), plugged in or not."""
    system_load: str = ""
    """Whether the phone publishes it, in words (empty: the backend reads no telemetry)."""
    error: str = ""
    """Why the readings are missing (locked, not paired, ...), or empty."""
    power_note: str = ""
    """Why power cannot be read with this backend, or empty."""


@dataclass(frozen=True, slots=True)
class BackendResult:
    backend: str
    rows: list[DeviceRow]
    unavailable: str = ""


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("devices", help="attached devices and what the host can read")
    parser.add_argument("--backend", choices=(*LISTED, "all"), default="all", metavar="KIND",
                        help=f"{', '.join(LISTED)} or all (default: all)")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    kinds = LISTED if args.backend == "all" else (args.backend,)
    import asyncio  # here: `anemon --help` builds this parser without asyncio

    results = asyncio.run(collect(kinds))
    if args.backend != "all" and results[0].unavailable:
        raise DeviceError(f"{args.backend}: {results[0].unavailable}")
    if args.json:
        write_stdout(to_json(results) + "\n")
    else:
        _print_table(results)
    return 0


async def collect(kinds: tuple[str, ...]) -> list[BackendResult]:
    return [await _collect(kind) for kind in kinds]


async def _collect(kind: str) -> BackendResult:
    try:
        reports = await BACKENDS[kind].list_attached()
    except (DeviceError, OSError) as e:
        return BackendResult(kind, [], str(e))
    power_note = "" if reads_power(kind) else f"not readable with {kind}"
    return BackendResult(kind, [_row(report, power_note) for report in reports])


def _row(report: DeviceReport, power_note: str) -> DeviceRow:
    info, t = report.info, report.telemetry or Telemetry()
    return DeviceRow(
        backend=info.kind,
        name=info.name,
        udid=info.udid,
        os=info.os,
        model=info.model,
        battery_percent=t.battery,
        charging=t.charging,
        plugged=t.plugged,
        temperature_c=t.temperature_c,
        power_w=None if t.power_w is None else round(t.power_w, 3),
        free_gb=None if t.free_gb is None else round(t.free_gb, 2),
        total_gb=None if t.total_gb is None else round(t.total_gb, 2),
        load_w=t.load_w,
        system_load=t.system_load if report.telemetry is not None else "",
        error=report.error,
        power_note=power_note,
    )


# -- output -------------------------------------------------------------------------------------


def to_json(results: list[BackendResult]) -> str:
    document = {
        "devices": [asdict(row) for result in results for row in result.rows],
        "backends": {r.backend: _status(r) for r in results},
    }
    return json.dumps(document, indent=2)


def _status(result: BackendResult) -> str:
    return f"unavailable: {result.unavailable}" if result.unavailable else "ok"


COLUMNS = ("backend", "name", "udid", "OS", "battery", "charging", "temp", "power", "disk free")
DROP_ORDER = ("disk free", "temp", "backend", "OS", "charging", "battery", "power")
"""The columns a narrow terminal loses first (a device's name and udid are never dropped)."""


@dataclass(frozen=True, slots=True)
class DevicesTable:
    """The devices as a rich table laid out for the console's width the way the summary table
    is (`render.fit_table`): never a name, a udid or a number cut; columns dropped (DROP_ORDER)
    and said so under the table."""

    rows: list[DeviceRow]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.table(options.max_width)

    def table(self, width: int) -> LinesTable | Table:
        from anemon.analysis.render import fit_table

        cells = [(r.backend, r.name, r.udid, r.os, *_readings(r)) for r in self.rows]
        return fit_table(COLUMNS, cells, width, DROP_ORDER, title="Devices", left=COLUMNS)


def _print_table(results: list[BackendResult]) -> None:
    from anemon.headless import make_console

    console = make_console()
    rows = [row for result in results for row in result.rows]
    console.print(DevicesTable(rows))
    for row in rows:  # under the table: its words would widen it past a terminal
        if row.system_load:
            print(printable(f"{row.name}: system load: {row.system_load}"))
    for result in results:
        if result.unavailable:
            print(f"{result.backend}: {_status(result)}", file=sys.stderr)
        for row in result.rows:
            if row.error:
                print(f"{row.backend} {row.name}: {row.error}", file=sys.stderr)


def _readings(row: DeviceRow) -> tuple[str, str, str, str, str]:
    battery = "—" if row.battery_percent is None else f"{row.battery_percent:.0f} %"
    charging = {None: "—", True: "charging", False: "not charging"}[row.charging]
    if row.charging is False and row.plugged:
        charging = "plugged, not charging"
    temp = "—" if row.temperature_c is None else f"{row.temperature_c:.1f} °C"
    power = row.power_note or "—"
    if row.power_w is not None:
        power = f"{row.power_w:.2f} W" + (" (charger)" if row.charging else "")
    disk = "—"
    if row.free_gb is not None:
        total = "" if row.total_gb is None else f" / {row.total_gb:.0f}"
        disk = f"{row.free_gb:.1f}{total} GB"
    return battery, charging, temp, power, disk
