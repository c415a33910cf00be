"""Bench plans (docs/spec/plan.md): TOML read and validated up front into frozen dataclasses.

Every problem is one line naming the file, the line (where the key is written) and the key,
and it is raised before anything touches a device.
"""

from __future__ import annotations

import dataclasses
import math
import re
import shlex
import shutil
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar, get_type_hints

from anemon.control.toml_lines import key_at, locate
from anemon.devices import DEVICE_KINDS
from anemon.devices.base import CONNECTIONS, DeviceError, DeviceSpec
from anemon.errors import AnemonError
from anemon.text import printable

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    from anemon.simulator import SimConfig

THERMAL_UNTIL = ("nominal", "fair", "serious", "none")
PROTOCOLS = ("sustain", "ab")
BATTERY_PROTOCOLS = ("any", "unplugged", "plugged")
ON_ERROR = ("abort", "next-arm")
FAULTS = ("none", "hang", "load_error", "gpu_timeout", "stall", "refuse_launch", "busy", "unplug",
          "jetsam")  # fmt: skip
"""The simulator's fault kinds (anemon.simulator.FAULTS; a test keeps the two equal)."""
SECTIONS = ("tag", "device", "app", "protocol", "cooldown", "guards", "alerts", "arms", "sim")
ALERT_THERMAL = ("fair", "serious", "critical", "none")
THERMAL_START = ("nominal", "fair", "serious", "critical")
CONDITIONS = ("", "ThermalFair", "ThermalSerious", "ThermalCritical")
"""`device.condition`: none, or a ThermalCondition profile of DVT's ConditionInducer."""
_TAG = re.compile(r"[A-Za-z0-9._-]+")
_NAME = re.compile(r"[^\s=\"]+")


class PlanError(AnemonError):
    """The plan cannot be run as written; nothing was started."""


@dataclass(frozen=True)
class AppSpec:
    bundle: str = "com.example.bench"
    log: str = "Documents/sustain/{tag}.log"
    """The log's path in the app's data container; `{tag}` is the plan's tag."""
    install: str = ""
    """A .app/.ipa installed before the first arm ("" = none)."""


@dataclass(frozen=True)
class ProtocolSpec:
    kind: str = "sustain"
    seconds: float = 600.0
    prompt: int = 128
    gen: int = 256
    rounds: int = 2
    trials: int = 5
    battery: str = "any"
    """"unplugged": the battery protocol (unplug before the first arm, replug after the
    last); "plugged": the phone must charge; "any": no check."""


@dataclass(frozen=True)
class CooldownSpec:
    min_s: float = 180.0
    until: str = "fair"
    """Thermal name to reach, or "none" (min_s alone)."""
    cap_s: float = 600.0


@dataclass(frozen=True)
class GuardSpec:
    settle_after_install_s: float = 10.0
    launch_retries: int = 5
    first_trial_timeout_s: float = 1500.0
    stall_timeout_s: float = 120.0
    min_free_gb: float = 5.0
    on_error: str = "next-arm"


@dataclass(frozen=True)
class AlertSpec:
    """`[alerts]`: what is worth interrupting the operator for; all off by default."""

    thermal: str = "none"
    """Alert on reaching this thermal state (or "none")."""
    decode_drop_pct: float = 0.0
    """Decode below the arm's burst (its first minute's median) by this share (0 = off)."""
    battery_floor_pct: float = 0.0
    disk_floor_gb: float = 0.0
    charging_changed: bool = False
    """The phone starts or stops charging while an arm runs."""
    hook: tuple[str, ...] = ()
    """A command run for each alert, as an argument list (never through a shell)."""
    hook_timeout_s: float = 10.0
    """A hook still running after this long is killed (and that is recorded)."""
    crash: bool = True
    """v3: a crash or jetsam report names the app (on by default: the round has failed)."""

    @property
    def any(self) -> bool:
        """Some condition is on."""
        levels = (self.decode_drop_pct, self.battery_floor_pct, self.disk_floor_gb)
        return self.thermal != "none" or self.charging_changed or self.crash or any(levels)


@dataclass(frozen=True)
class ArmSpec:
    name: str
    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def model(self) -> str:
        """The AB_MODEL the app is given (the arm's env wins over its name)."""
        return self.env.get("AB_MODEL", self.name)


@dataclass(frozen=True)
class SimArmSpec:
    profile: str
    fault: str = "none"
    fault_at_s: float = 0.0
    fault_count: int = 1
    power_w: float = 0.0
    """Device power while decoding at the burst rate; 0 = the profile's."""


@dataclass(frozen=True)
class SimSpec:
    start_thermal: str = "nominal"
    plugged: bool = True
    free_gb: float = 38.0
    arms: Mapping[str, SimArmSpec] = field(default_factory=lambda: MappingProxyType({}))
    """By arm name."""


@dataclass(frozen=True)
class Plan:
    tag: str
    arms: tuple[ArmSpec, ...]
    device: DeviceSpec = field(default_factory=DeviceSpec)
    app: AppSpec = AppSpec()
    protocol: ProtocolSpec = ProtocolSpec()
    cooldown: CooldownSpec = CooldownSpec()
    guards: GuardSpec = GuardSpec()
    sim: SimSpec = SimSpec()
    path: Path | None = None
    """Where it was read from (None: built in code)."""
    alerts: AlertSpec = AlertSpec()

    @property
    def log_path(self) -> str:
        return self.app.log.replace("{tag}", self.tag)

    def to_dict(self) -> dict[str, Any]:
        """The plan as the recording's header stores it (every default filled in)."""
        return {
            "tag": self.tag,
            "device": _fields(self.device),
            "app": _fields(self.app),
            "protocol": _fields(self.protocol),
            "cooldown": _fields(self.cooldown),
            "guards": _fields(self.guards),
            "alerts": {**_fields(self.alerts), "hook": list(self.alerts.hook)},
            "arms": [{"name": a.name, "env": dict(a.env)} for a in self.arms],
            "sim": {
                **{k: v for k, v in _fields(self.sim).items() if k != "arms"},
                "arms": {name: _fields(arm) for name, arm in self.sim.arms.items()},
            },
        }


def _fields(obj: DataclassInstance) -> dict[str, Any]:
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}


# -- what the device is built from --------------------------------------------------------------


def device_spec(plan: Plan) -> DeviceSpec:
    """What the plan's backend is built from (`anemon.devices.Backend.make`): its `[device]`
    table; for the simulator with its `[sim]` setup and the app (`SimDeviceSpec`), so the
    backend never reads a plan."""
    if plan.device.kind != "sim":
        return plan.device
    from anemon.devices.sim import SimDeviceSpec

    try:
        config = sim_config(plan)
    except ValueError as e:  # a plan built in code, unchecked: what the reader would have said
        raise DeviceError(f"simulator: {e}") from e
    return SimDeviceSpec(**_fields(plan.device), bundle=plan.app.bundle, config=config)


def sim_config(plan: Plan) -> SimConfig:
    """The SimConfig a plan's [sim] section describes (arms keyed by their names, AB_ARM)."""
    from anemon.simulator import SimArmConfig, SimConfig

    arms = {
        arm.name: SimArmConfig(
            profile=spec.profile,
            fault=spec.fault,
            fault_at_s=spec.fault_at_s,
            fault_count=spec.fault_count,
            power_w=spec.power_w,
        )
        for arm in plan.arms
        if (spec := plan.sim.arms.get(arm.name)) is not None
    }
    sim = plan.sim
    return SimConfig(start_thermal=sim.start_thermal, plugged=sim.plugged, free_gb=sim.free_gb,
                     arms=arms)  # fmt: skip


# -- reading ----------------------------------------------------------------------------------


def load_plan(path: Path, kind: str | None = None) -> Plan:
    """Read and validate a plan file; PlanError (exit 2) on any problem. `kind`: the device
    kind to run it on instead of its own (`--device`), which it is validated for."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise PlanError(f"{path}: cannot read the plan: {e.strerror or e}") from e
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise PlanError(_not_utf8(data, e, path)) from None
    return parse_plan(text, path, kind)


def _not_utf8(data: bytes, error: UnicodeDecodeError, path: Path) -> str:
    """`file:line: key: ...` for the first byte that is not UTF-8."""
    line = data.count(b"\n", 0, error.start) + 1
    column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
    key = key_at(data.decode("utf-8", errors="replace"), line)
    where = f"{path}:{line}: {_dotted(key)}" if key else f"{path}:{line}"
    byte = data[error.start]
    return (f"{where}: not UTF-8 text (byte 0x{byte:02x} at column {column}); "
            "save the plan as UTF-8")  # fmt: skip


def parse_plan(text: str, path: Path | str = "<plan>", kind: str | None = None) -> Plan:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise PlanError(_syntax_message(str(e), path)) from e
    return _Reader(text, Path(path)).plan(data, kind)


def _syntax_message(message: str, path: Path | str) -> str:
    match = re.search(r"\s*\(at line (\d+), column \d+\)$", message)
    if match is None:
        return f"{path}: not valid TOML: {message}"
    return f"{path}:{match.group(1)}: not valid TOML: {message[: match.start()]}"


_Key = tuple[str | int, ...]
_Spec = TypeVar("_Spec", bound="DataclassInstance")
_Check = Callable[[Any], str | None]
"""A value's problem ("must be > 0 ..."), or None."""
_SCALARS: tuple[type, ...] = (str, float, int, bool)
"""The types a spec's field read from the plan may have."""


class _Reader:
    """Validates the TOML document section by section, naming file, line and key."""

    def __init__(self, text: str, path: Path) -> None:
        self.text = text
        self.path = path

    def error(self, key: _Key, problem: str) -> PlanError:
        line = locate(self.text, key)
        where = f"{self.path}:{line}" if line is not None else str(self.path)
        return PlanError(f"{where}: {_dotted(key)}: {problem}")

    def plan(self, data: dict[str, Any], kind: str | None = None) -> Plan:
        self.only(data, (), SECTIONS)
        if "tag" not in data:
            raise self.error(("tag",), "required (a name for the run: letters, digits, . _ -)")
        tag = self.value(data["tag"], ("tag",), str)
        if not _TAG.fullmatch(tag):
            raise self.error(("tag",), f"{_quoted(tag)}: only letters, digits, '.', '_', '-'")
        if len(tag) > MAX_NAME:
            raise self.error(("tag",), f"{len(tag)} characters (expected at most {MAX_NAME})")
        device_checks = _checks("device")
        device = self.section(data, "device", DeviceSpec, device_checks)
        self.choice(device.kind, ("device", "kind"), DEVICE_KINDS)
        if kind is not None:  # --device: the rest is checked for the kind it will run on
            device = dataclasses.replace(device, kind=kind)
        self.choice(device.connect, ("device", "connect"), CONNECTIONS)
        self.choice(device.condition, ("device", "condition"), CONDITIONS)
        app = self.section(data, "app", AppSpec, {"bundle": _nonempty, "log": _nonempty})
        protocol = self.protocol(data)
        cooldown = self.cooldown(data)
        guards = self.guards(data)
        arms = self.arms(data)
        sim = self.sim(data, arms, device.kind == "sim")
        alerts = self.alerts(data)
        return Plan(tag, arms, device, app, protocol, cooldown, guards, sim, self.path,
                    alerts=alerts)  # fmt: skip

    # -- sections --------------------------------------------------------------------------

    def protocol(self, data: dict[str, Any]) -> ProtocolSpec:
        checks = _checks("protocol")
        protocol = self.section(data, "protocol", ProtocolSpec, checks)
        self.choice(protocol.kind, ("protocol", "kind"), PROTOCOLS)
        self.choice(protocol.battery, ("protocol", "battery"), BATTERY_PROTOCOLS)
        return protocol

    def cooldown(self, data: dict[str, Any]) -> CooldownSpec:
        checks = _checks("cooldown")
        cooldown = self.section(data, "cooldown", CooldownSpec, checks)
        self.choice(cooldown.until, ("cooldown", "until"), THERMAL_UNTIL)
        if cooldown.cap_s < cooldown.min_s:
            raise self.error(("cooldown", "cap_s"), f"{cooldown.cap_s:g} is below min_s")
        return cooldown

    def guards(self, data: dict[str, Any]) -> GuardSpec:
        checks = _checks("guards")
        guards = self.section(data, "guards", GuardSpec, checks)
        self.choice(guards.on_error, ("guards", "on_error"), ON_ERROR)
        return guards

    def alerts(self, data: dict[str, Any]) -> AlertSpec:
        """`[alerts]`; `hook` is a string (split as a shell would, but never run by one) or an
        array of strings, and its command must be found now, not at the first alert."""
        table = data.get("alerts", {})
        if not isinstance(table, dict):
            raise self.error(("alerts",), f"must be a table [alerts], not {_type(table)}")
        rest = {k: v for k, v in table.items() if k != "hook"}
        alerts = self.section({"alerts": rest}, "alerts", AlertSpec, _checks("alerts"))
        self.choice(alerts.thermal, ("alerts", "thermal"), ALERT_THERMAL)
        if "hook" not in table:
            return alerts
        return dataclasses.replace(alerts, hook=self.hook(table["hook"]))

    def hook(self, value: Any) -> tuple[str, ...]:
        key: _Key = ("alerts", "hook")
        if isinstance(value, str):
            try:
                argv = shlex.split(value)
            except ValueError as e:
                raise self.error(key, f"cannot be split into arguments: {e}") from None
        elif isinstance(value, list) and all(isinstance(part, str) for part in value):
            argv = list(value)
        else:
            raise self.error(key, f"must be a string or an array of strings, not {_type(value)}")
        if not argv:
            return ()
        if not argv[0] or shutil.which(argv[0]) is None:
            raise self.error(key, f"{_quoted(argv[0])} cannot be found (not on PATH, or not an "
                                  "executable file); give its full path")  # fmt: skip
        return tuple(argv)

    def arms(self, data: dict[str, Any]) -> tuple[ArmSpec, ...]:
        raw = data.get("arms")
        if raw is None:
            raise self.error(("arms",), "required: at least one [[arms]] with a name")
        if not isinstance(raw, list) or not all(isinstance(a, dict) for a in raw) or not raw:
            raise self.error(("arms",), "must be one or more [[arms]] tables")
        if len(raw) > MAX_ARMS:
            raise self.error(("arms",), f"{len(raw)} arms (expected at most {MAX_ARMS})")
        arms: list[ArmSpec] = []
        for index, table in enumerate(raw):
            arm = self.arm(table, index)
            if any(a.name == arm.name for a in arms):
                raise self.error(("arms", index, "name"), f"{arm.name!r} appears twice")
            arms.append(arm)
        return tuple(arms)

    def arm(self, table: dict[str, Any], index: int) -> ArmSpec:
        key: _Key = ("arms", index)
        self.only(table, key, ("name", "env"))
        if "name" not in table:
            raise self.error(key, "every arm needs a name")
        name = self.value(table["name"], (*key, "name"), str)
        if not _NAME.fullmatch(name) or not name.isprintable():
            problem = f"{_quoted(name)}: no spaces, double quotes, '=' or control characters"
            raise self.error((*key, "name"), problem)
        if len(name) > MAX_NAME:
            problem = f"{len(name)} characters (expected at most {MAX_NAME})"
            raise self.error((*key, "name"), problem)
        env = table.get("env", {})
        if not isinstance(env, dict):
            raise self.error((*key, "env"), 'must be a table of strings, e.g. { AB_MODEL = "x" }')
        for var, value in env.items():
            if not isinstance(value, str):
                raise self.error((*key, "env", var), f"must be a string, not {_type(value)}")
        return ArmSpec(name, MappingProxyType(dict(env)))

    def sim(self, data: dict[str, Any], arms: tuple[ArmSpec, ...], used: bool) -> SimSpec:
        raw = data.get("sim", {})
        if not isinstance(raw, dict):
            raise self.error(("sim",), "must be a table")
        base = self.section({"sim": {k: v for k, v in raw.items() if k != "arms"}}, "sim",
                            SimSpec, _checks("sim"))  # fmt: skip
        self.choice(base.start_thermal, ("sim", "start_thermal"), THERMAL_START)
        tables = raw.get("arms", {})
        if not isinstance(tables, dict):
            raise self.error(("sim", "arms"), "must be tables [sim.arms.<arm name>]")
        names = {a.name for a in arms}
        for name in tables:
            if name not in names:
                raise self.error(("sim", "arms", name), f"no [[arms]] is named {name!r}")
        configured = {
            a.name: self.sim_arm(tables.get(a.name, {}), a, i, used) for i, a in enumerate(arms)
        }
        return SimSpec(base.start_thermal, base.plugged, base.free_gb, MappingProxyType(configured))

    def sim_arm(self, table: Any, arm: ArmSpec, index: int, used: bool) -> SimArmSpec:
        key: _Key = ("sim", "arms", arm.name)
        if not isinstance(table, dict):
            raise self.error(key, "must be a table")
        checks = _checks("sim.arms")
        spec = self.fields(table, key, SimArmSpec, checks, defaults={"profile": arm.model})
        self.choice(spec.fault, (*key, "fault"), FAULTS)
        if used:
            from anemon.simulator import PROFILES

            if spec.profile not in PROFILES:
                known = ", ".join(sorted(PROFILES))
                if "profile" in table:
                    problem = f"no built-in profile {spec.profile!r} (one of {known})"
                    raise self.error((*key, "profile"), problem)
                problem = f"{arm.name!r} needs [sim.arms.{arm.name}] profile = one of {known}"
                raise self.error(("arms", index, "name"), problem)
        return spec

    # -- generic ---------------------------------------------------------------------------

    def section(
        self,
        data: dict[str, Any],
        name: str,
        cls: type[_Spec],
        checks: Mapping[str, _Check],
    ) -> _Spec:
        table = data.get(name, {})
        if not isinstance(table, dict):
            raise self.error((name,), f"must be a table [{name}], not {_type(table)}")
        return self.fields(table, (name,), cls, checks)

    def fields(
        self,
        table: dict[str, Any],
        key: _Key,
        cls: type[_Spec],
        checks: Mapping[str, _Check],
        *,
        defaults: Mapping[str, Any] | None = None,
    ) -> _Spec:
        """A spec from its table: every key one of its fields, of that field's type."""
        names = tuple(f.name for f in dataclasses.fields(cls))
        self.only(table, key, names)
        types = get_type_hints(cls)
        values: dict[str, Any] = dict(defaults or {})
        for name in names:
            if name not in table:
                continue
            value = self.value(table[name], (*key, name), _scalar(types[name]))
            check = checks.get(name)
            if check is not None and (problem := check(value)):
                raise self.error((*key, name), problem)
            values[name] = value
        return cls(**values)

    def value(self, value: Any, key: _Key, kind: type) -> Any:
        """`value` (written at `key`) if it is a `kind`; an integer is a float too."""
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, kind) and (kind is bool or not isinstance(value, bool)):
            return value
        wanted = {str: "a string", float: "a number", int: "an integer", bool: "true or false"}
        raise self.error(key, f"must be {wanted[kind]}, not {_type(value)}")

    def only(self, table: dict[str, Any], key: _Key, allowed: tuple[str, ...]) -> None:
        for name in table:
            if name not in allowed:
                raise self.error((*key, name), f"unknown key (known: {', '.join(allowed)})")

    def choice(self, value: str, key: _Key, allowed: tuple[str, ...]) -> None:
        if value not in allowed:
            raise self.error(key, f"{value!r} is not one of {', '.join(allowed)}")


def _scalar(kind: object) -> type:
    """A field's type, which must be one a TOML value is read as."""
    if isinstance(kind, type) and kind in _SCALARS:
        return kind
    raise TypeError(f"a plan field of type {kind!r} is not read from TOML")


@dataclass(frozen=True)
class Range:
    """The values a plan's number may take: finite, from `low` (`> low` when `open_low`) to
    `high`, so that no plan asks for a run that never ends or a count that fills memory."""

    low: float
    high: float
    unit: str = ""
    open_low: bool = False

    @property
    def expected(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        return f"{'>' if self.open_low else '>='} {self.low:.15g} and <= {self.high:.15g}{unit}"

    def __call__(self, value: float) -> str | None:
        if not math.isfinite(value):
            return f"not a finite number: {value} (expected {self.expected})"
        above = value > self.low if self.open_low else value >= self.low
        if above and value <= self.high:
            return None
        return f"{_shown(value)} is out of range (expected {self.expected})"


DAY_S = 86_400.0
RANGES: Mapping[tuple[str, str], Range] = MappingProxyType({
    ("device", "poll_s"): Range(0.01, 3600, "seconds"),
    ("device", "power_s"): Range(0.01, 3600, "seconds"),
    ("device", "process_s"): Range(0.01, 3600, "seconds"),
    ("protocol", "seconds"): Range(0, DAY_S, "seconds", open_low=True),
    ("protocol", "prompt"): Range(1, 1_000_000, "tokens"),
    ("protocol", "gen"): Range(1, 1_000_000, "tokens"),
    ("protocol", "rounds"): Range(1, 1000),
    ("protocol", "trials"): Range(1, 100_000),
    ("cooldown", "min_s"): Range(0, DAY_S, "seconds"),
    ("cooldown", "cap_s"): Range(0, DAY_S, "seconds"),
    ("guards", "settle_after_install_s"): Range(0, 3600, "seconds"),
    ("guards", "launch_retries"): Range(0, 100),
    ("guards", "first_trial_timeout_s"): Range(0, DAY_S, "seconds", open_low=True),
    ("guards", "stall_timeout_s"): Range(0, DAY_S, "seconds", open_low=True),
    ("guards", "min_free_gb"): Range(0, 1_000_000, "GB"),
    ("alerts", "decode_drop_pct"): Range(0, 100, "%", open_low=False),
    ("alerts", "battery_floor_pct"): Range(0, 100, "%"),
    ("alerts", "disk_floor_gb"): Range(0, 1_000_000, "GB"),
    ("alerts", "hook_timeout_s"): Range(0, 3600, "seconds", open_low=True),
    ("sim", "free_gb"): Range(0, 1_000_000, "GB"),
    ("sim.arms", "fault_at_s"): Range(0, DAY_S, "seconds"),
    ("sim.arms", "fault_count"): Range(0, 1000),
    ("sim.arms", "power_w"): Range(0, 100, "W"),
})  # fmt: skip
"""Every number a plan holds, with its range (docs/spec/plan.md; a test keeps the two equal
and checks that every numeric field has one)."""
MAX_ARMS = 1000
MAX_NAME = 200
"""Characters in a tag or an arm name."""


def _checks(section: str) -> dict[str, _Check]:
    return {name: check for (where, name), check in RANGES.items() if where == section}


def _shown(value: float) -> str:
    """A number as an error shows it: whole, or cut when it is absurdly long."""
    text = str(value) if isinstance(value, int) else f"{value:g}"
    return text if len(text) <= 24 else f"{text[:12]}... ({len(text)} digits)"


def _quoted(text: str) -> str:
    """A plan's string in an error line: quoted, its control characters escaped, cut short."""
    return printable(repr(text if len(text) <= 60 else text[:60] + "..."))


def _nonempty(value: str) -> str | None:
    return None if value else "must not be empty"


def _type(value: object) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
             list: "an array", dict: "a table"}  # fmt: skip
    return names.get(type(value), type(value).__name__)


def _dotted(key: _Key) -> str:
    parts: list[str] = []
    for part in key:
        if isinstance(part, int):
            parts[-1] += f"[{part}]"
        else:
            shown = part if len(part) <= 60 else part[:60] + "..."
            parts.append(shown if _TAG.fullmatch(part) else f'"{printable(shown)}"')
    return ".".join(parts)
