"""Pre-flight checks (docs/spec/cli.md "v2: pre-flight checks"): what a run makes sure of
before its first launch, and what `anemon preflight PLAN` prints.

Each check is pass, warn or fail, with what was read. They work on the Device interface only,
so every backend answers; what a backend cannot read (devicectl: no battery, disk or
temperature) is said so ("not readable with devicectl"), never a crash. A failed check stops
a run before anything is launched, unless `--force`.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from anemon.control.cooldown import host_thermal
from anemon.control.plan import Plan
from anemon.devices import reads_power
from anemon.devices.base import (
    CrashReports,
    Device,
    DeviceError,
    DeviceGone,
    DeviceInfo,
    Inspector,
    Telemetry,
)
from anemon.errors import AnemonError
from anemon.events import (
    CHECK_STATUSES,
    THERMAL_NAMES,
    Check,
    CheckStatus,
    LoadEvent,
    PreflightEvent,
    StartEvent,
)
from anemon.paths import same_file
from anemon.text import printable

if TYPE_CHECKING:
    from anemon.recording.index import Entry

HEADROOM_GB = 2.0
"""Free disk wanted beyond the largest arm's footprint (a cold load's compile cache)."""
HISTORY_FILES = 200
"""At most this many recordings (the newest) are looked at for the last one of a tag."""
SHARED_MODEL = (
    "{arms} stay apart in this run (by launch), but a raw log of theirs is one arm "
    "unless the app writes arm=$AB_ARM"
)
"""The note of the arms check: why arms that share an AB_MODEL are worth a warning."""


@dataclass(frozen=True, slots=True)
class History:
    """What the last recording with this tag says (all None: there is none)."""

    path: Path | None = None
    os: str | None = None
    footprint_gb: float | None = None
    """The largest footprint a LOAD line of it gave."""
    ended: float | None = None
    """When it was last written (epoch seconds): reports after it are news (v3)."""


@dataclass(frozen=True, slots=True)
class Preflight:
    """The checks' results, in the order of the spec."""

    checks: tuple[Check, ...]

    @property
    def status(self) -> CheckStatus:
        """The worst verdict."""
        return max((c.status for c in self.checks), key=CHECK_STATUSES.index, default="pass")

    @property
    def failed(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if c.status == "fail")

    def event(self, *, t: float, wall: float, forced: bool = False) -> PreflightEvent:
        return PreflightEvent(t=t, wall=wall, source="preflight", status=self.status,
                              checks=self.checks, forced=forced and bool(self.failed))  # fmt: skip

    def summary(self) -> str:
        """One line: "pre-flight: 6 pass, 1 warn (thermal: ...)"."""
        counts = [
            f"{n} {s}" for s in CHECK_STATUSES if (n := sum(c.status == s for c in self.checks))
        ]
        worst = [f"{c.check}: {c.note or c.reading}" for c in self.checks if c.status != "pass"]
        return "pre-flight: " + ", ".join(counts) + (f" ({'; '.join(worst)})" if worst else "")


async def run_checks(
    plan: Plan,
    device: Device,
    *,
    info: DeviceInfo | None = None,
    history: History | None = None,
    operator_went_on: bool = False,
) -> Preflight:
    """Every check against `device` (connected first unless `info` is given).

    `operator_went_on`: the battery protocol's unplug wait ended with the operator going on
    (k or --force) rather than with the phone unplugged: the charging check only warns."""
    if info is None:
        try:
            info = await device.connect()
        except DeviceError as e:
            return Preflight((Check("device", "fail", "does not answer", printable(str(e))),))
    reading, error = await _telemetry(device)
    # a phone gone, or no reading from a backend that reads telemetry: nothing could launch
    silent = reading is None and error is None and bool(reads_power(device.kind))
    out_of_reach = silent or isinstance(error, DeviceGone)
    unreadable = (
        f"not readable: {printable(str(error))}" if error else f"not readable with {device.kind}"
    )
    if silent:
        unreadable = "not read: the host cannot reach the phone (the cable out?)"
    checks = [
        _device(info, _unreachable(plan) if out_of_reach else ""),
        await _app(plan, device),
        _disk(plan, reading, unreadable, _footprint(plan, history)),
        _thermal(plan, reading, unreadable),
        _battery(plan, reading, unreadable, operator_went_on),
        _system_load(reading, unreadable),
        await _low_power(device),
        _os(info, history or History()),
    ]
    if isinstance(device, CrashReports):  # only a backend that can list them
        checks.append(await _crash_reports(plan, device, history or History()))
    checks.extend(_shared_models(plan))
    return Preflight(tuple(checks))


def _shared_models(plan: Plan) -> list[Check]:
    """A warning for each AB_MODEL several arms give the app: only a run knows their lines
    apart (control.launch.Attribution), not a raw log's `watch`, `replay` or `summary`."""
    arms: dict[str, list[str]] = {}
    for arm in plan.arms:
        arms.setdefault(arm.model, []).append(arm.name)
    return [Check("arms", "warn", printable(f"{_names(names)} share AB_MODEL {model}"),
                  SHARED_MODEL.format(arms=_names(names)))
            for model, names in arms.items() if len(names) > 1]  # fmt: skip


def _names(names: Sequence[str], shown: int = 3) -> str:
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")


async def _telemetry(device: Device) -> tuple[Telemetry | None, DeviceError | None]:
    try:
        return await device.telemetry(), None
    except DeviceError as e:
        return None, e


def _device(info: DeviceInfo, unreachable: str) -> Check:
    """It answered `connect`; `unreachable`: but the phone cannot be reached now (why)."""
    parts = [info.name or "?", info.model, f"OS {info.os}" if info.os else "OS build unknown"]
    shown = printable(", ".join(p for p in parts if p))
    return (
        Check("device", "fail", shown, unreachable)
        if unreachable
        else Check("device", "pass", shown)
    )


def _unreachable(plan: Plan) -> str:
    """What to do about a phone the host cannot reach (docs/spec/plan.md, `sim.plugged`)."""
    usb = plan.device.connect == "usb"
    if plan.device.kind == "sim" and usb and not plan.sim.plugged:
        return (
            "the host cannot reach the phone: sim.plugged = false takes the cable out, its "
            'only link over USB; for a phone on battery use device.connect = "network"'
        )
    advice = 'plug its cable in, or use device.connect = "network"' if usb else "check its network"
    return f"the host cannot reach the phone, so nothing can be launched: {advice}"


async def _app(plan: Plan, device: Device) -> Check:
    bundle = printable(plan.app.bundle)
    installing = f"app.install installs {printable(plan.app.install)} before the first arm"
    if not isinstance(device, Inspector):
        return Check("app", "warn", f"{bundle}: not readable with {device.kind}")
    try:
        installed = await device.app_installed(plan.app.bundle)
    except DeviceError as e:
        return Check("app", "warn", f"{bundle}: could not be checked", printable(str(e)))
    if installed is None:
        return Check("app", "warn", f"{bundle}: not readable with {device.kind}")
    if installed:
        return Check("app", "pass", f"{bundle} installed")
    if plan.app.install:
        return Check("app", "pass", f"{bundle} not installed yet", installing)
    return Check("app", "fail", f"{bundle} not installed",
                 "install it, or name the .app/.ipa in app.install")  # fmt: skip


def _footprint(plan: Plan, history: History | None) -> float | None:
    """The largest arm's footprint: from the last recording of this tag, else (simulator)
    the built-in profiles; None when unknown."""
    if history is not None and history.footprint_gb is not None:
        return history.footprint_gb
    if plan.device.kind != "sim":
        return None
    from anemon.simulator import PROFILES

    sizes = [PROFILES[a.profile].footprint_gb for a in plan.sim.arms.values()
             if a.profile in PROFILES]  # fmt: skip
    return max(sizes, default=None)


def _disk(plan: Plan, reading: Telemetry | None, unreadable: str, footprint: float | None) -> Check:
    floor = plan.guards.min_free_gb
    free = reading.free_gb if reading is not None else None
    if free is None:
        later = f"guards.min_free_gb = {floor:g} is checked by each arm's START line"
        return Check("free disk", "warn", unreadable, later)
    shown = f"{free:.1f} GB free (guards.min_free_gb = {floor:g}"
    shown += f", largest footprint {footprint:.1f} GB)" if footprint is not None else ")"
    if free < floor:
        return Check("free disk", "fail", shown, "below guards.min_free_gb: no arm would start")
    if footprint is not None and free < footprint + HEADROOM_GB:
        return Check("free disk", "warn", shown,
                     f"less than the largest footprint + {HEADROOM_GB:g} GB: a cold load's "
                     "compile cache may fill the disk")  # fmt: skip
    return Check("free disk", "pass", shown)


def _thermal(plan: Plan, reading: Telemetry | None, unreadable: str) -> Check:
    until = plan.cooldown.until
    celsius = reading.temperature_c if reading is not None else None
    if celsius is None or not math.isfinite(celsius):
        return Check("thermal", "warn", unreadable, "the first arm may start warm")
    state = host_thermal(celsius)
    shown = f"{THERMAL_NAMES[state]} (battery {celsius:.1f} °C, the host's estimate)"
    if until != "none" and state > THERMAL_NAMES.index(until):
        return Check("thermal", "warn", shown,
                     f"above cooldown.until = {until}: the first arm would start warm")  # fmt: skip
    return Check("thermal", "pass", shown)


def _charging_text(reading: Telemetry) -> str:
    if reading.charging:
        return "charging"
    if reading.plugged:
        return "plugged in, not charging"
    if reading.plugged is False:
        return "on battery (unplugged)"
    return "charging state unknown"


def _battery(plan: Plan, reading: Telemetry | None, unreadable: str, went_on: bool) -> Check:
    mode = plan.protocol.battery
    asked = f"protocol.battery = {mode}"
    if reading is None or (reading.charging is None and reading.plugged is None):
        status: CheckStatus = "pass" if mode == "any" else "warn"
        return Check(
            "battery", status, unreadable, "" if mode == "any" else f"{asked}: not checked"
        )
    level = f"{reading.battery:.0f} %, " if reading.battery is not None else ""
    shown = f"{level}{_charging_text(reading)}"
    if mode == "unplugged" and (reading.charging or reading.plugged):
        if went_on:
            return Check("battery", "warn", shown, f"{asked}, and the operator went on anyway")
        return Check("battery", "fail", shown, f"{asked}: unplug the phone; energy needs it")
    if mode == "plugged" and not (reading.charging or reading.plugged):
        return Check("battery", "warn", shown, f"{asked}: the phone is not plugged in")
    return Check("battery", "pass", shown, "" if mode == "any" else asked)


def _system_load(reading: Telemetry | None, unreadable: str) -> Check:
    """Whether the phone publishes its own system load: energy with the cable in (issue 27).
    Informational: without it a plugged-in run's energy is withheld, as it always was."""
    if reading is None:
        return Check("system load", "pass", unreadable)
    if reading.load_w is None:
        return Check("system load", "pass", reading.system_load)
    return Check("system load", "pass", reading.system_load,
                 "energy while it charges comes from it (unverified on a real iPhone)")  # fmt: skip


async def _low_power(device: Device) -> Check:
    not_readable = Check("low power", "pass", f"not readable with {device.kind}")
    if not isinstance(device, Inspector):
        return not_readable
    try:
        on = await device.low_power()
    except DeviceError as e:
        return Check("low power", "warn", "could not be read", printable(str(e)))
    if on is None:
        return not_readable
    if on:
        return Check("low power", "warn", "Low Power Mode on",
                     "it slows the chips: turn it off (Settings > Battery)")  # fmt: skip
    return Check("low power", "pass", "off")


def _os(info: DeviceInfo, history: History) -> Check:
    now = printable(info.os) if info.os else ""
    if history.path is None or not history.os:
        return Check("os build", "pass", now or "unknown", "no earlier recording with this tag")
    before = printable(history.os)
    if not now:
        return Check("os build", "warn", "unknown", f"the last recording had {before}")
    if now != before:
        return Check("os build", "warn", f"{now} (was {before})",
                     f"the OS changed since {printable(history.path.name)}: caches rebuild, "
                     "first loads are cold")  # fmt: skip
    return Check("os build", "pass", now, f"as in {printable(history.path.name)}")


async def _crash_reports(plan: Plan, device: CrashReports, history: History) -> Check:
    """The app's crash and jetsam reports since the last session of this tag was written (all
    of them when there is none): a warning, since a run's figures beside an unexplained kill
    are not worth much until it is looked at. The backend is asked for the newer ones only
    (a phone keeps dozens: each one read is a round trip)."""
    since = history.ended if history.path is not None else None
    try:
        reports = await device.reports(plan.app.bundle, since)
    except DeviceError as e:
        return Check("crash reports", "warn", "could not be listed", printable(str(e)))
    if history.path is None or since is None:
        return Check("crash reports", "pass", f"{len(reports)} for the app on the phone",
                     "no earlier recording with this tag")  # fmt: skip
    new = sorted((r for r in reports if r[1] > since), key=lambda r: r[1])
    last = printable(history.path.name)
    if not new:
        return Check("crash reports", "pass", f"none for the app since {last}")
    count = f"{len(new)} report{'' if len(new) == 1 else 's'}"
    newest = printable(new[-1][0])
    return Check("crash reports", "warn", f"{count} for the app since {last}, newest {newest}",
                 "the app crashed or was killed since the last session: read the report "
                 "before trusting a run beside it")  # fmt: skip


# -- the last recording with this tag -------------------------------------------------------


def find_history(tag: str, folders: Iterable[Path], exclude: Path | None = None) -> History:
    """The newest recording of `tag` in `folders` (not `exclude`, the run's own), read as the
    session index reads it, and the largest footprint its LOAD lines gave. A folder or file
    that cannot be read is passed over."""
    from anemon.recording.index import read_entry

    newest: Entry | None = None
    for path in _candidates(folders, exclude):
        with contextlib.suppress(AnemonError, OSError, ValueError):
            entry = read_entry(path)
            if entry.tag == tag and (newest is None or _dated(entry) > _dated(newest)):
                newest = entry
    return History() if newest is None else _history(newest)


def _dated(entry: Entry) -> tuple[bool, datetime]:
    """Newer sorts later; a recording without a creation time is the oldest."""
    return (entry.created is not None, entry.created or datetime.min.replace(tzinfo=UTC))


def _candidates(folders: Iterable[Path], exclude: Path | None) -> list[Path]:
    from anemon.recording.index import recording_files

    found: dict[Path, float] = {}
    for folder in folders:
        with contextlib.suppress(AnemonError, OSError):
            for path in recording_files(folder):
                if exclude is None or not same_file(path, exclude):
                    found[path.resolve()] = path.stat().st_mtime
    return sorted(found, key=found.__getitem__, reverse=True)[:HISTORY_FILES]


def _history(entry: Entry) -> History:
    """The OS build its header gave (else its first START's), and its LOADs' footprint."""
    from anemon.recording.reader import open_source

    os_build = entry.os_build
    footprint: float | None = None
    with contextlib.suppress(AnemonError, OSError, ValueError):
        reader = open_source(entry.path)
        try:
            for event in reader:
                if isinstance(event, LoadEvent) and event.footprint_gb is not None:
                    footprint = max(footprint or 0.0, event.footprint_gb)
                elif isinstance(event, StartEvent) and not os_build and event.os:
                    os_build = event.os
        finally:
            reader.close()
    ended: float | None = None
    with contextlib.suppress(OSError):
        ended = entry.path.stat().st_mtime
    return History(entry.path, os_build or None, footprint, ended)


def history_folders(record: Path | None, default: Path) -> Sequence[Path]:
    """Where earlier recordings are looked for: beside this run's own, and the default folder."""
    folders = [default]
    if record is not None and record.parent.resolve() != default.resolve():
        folders.insert(0, record.parent)
    return folders
