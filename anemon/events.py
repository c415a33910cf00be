"""The events that flow from sources through the Session to the views and the recording.

Every event carries `t` (seconds since the session began, monotonic), `wall` (epoch seconds),
`arm` (or None) and `source`. The record kinds mirror the line protocol; the others are the
controller's, the operator's and the host's (docs/ARCHITECTURE.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import ClassVar, Literal, get_args

THERMAL_NAMES = ("nominal", "fair", "serious", "critical")
"""ProcessInfo.thermalState names, indexed by their numeric value."""
BATTERY_STATES = ("unknown", "unplugged", "charging", "full")
"""The protocol's battery_state words (UIDevice.BatteryState), in its order."""

_EMPTY: Mapping[str, str] = MappingProxyType({})


def thermal_name(value: int | None) -> str | None:
    """The name of a numeric thermal state (None stays None)."""
    return None if value is None else THERMAL_NAMES[value]


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """What every event has."""

    kind: ClassVar[str] = "event"
    t: float
    """Seconds since the session began."""
    wall: float
    """Epoch seconds when it happened (or was read)."""
    arm: str | None = None
    """The arm it belongs to, if any."""
    source: str = ""
    """Where it came from: a file name, a device, "controller", "operator", "simulated operator"."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordEvent(Event):
    """A line of the bench log (line-protocol.md)."""

    line: str = ""
    """The raw line as it came (shown literally in the log panel)."""
    tag: str | None = None
    app_t: float | None = None
    """The record's own `t=`: seconds since the arm's process started."""
    extra: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    """Keys the protocol does not know, kept as text."""
    warnings: int = 0
    """Known keys whose values did not parse."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StartEvent(RecordEvent):
    kind: ClassVar[str] = "start"
    model: str | None = None
    compute: str | None = None
    """"ane", "gpu" or "cpu" (lower-cased)."""
    bits: str | None = None
    bundle: str | None = None
    os: str | None = None
    """The OS build (caches are rebuilt after an OS update)."""
    free_gb: float | None = None
    mode: str | None = None
    """"sustain" or "ab" (lower-cased)."""
    p: int | None = None
    """Prompt tokens per trial."""
    g: int | None = None
    """Tokens generated per trial."""
    n: int | None = None
    """Timed trials per launch (ab)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadEvent(RecordEvent):
    kind: ClassVar[str] = "load"
    load_s: float | None = None
    cold: bool | None = None
    footprint_gb: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadingsEvent(RecordEvent):
    """A record that carries the app's readings of the phone (TRIAL and IDLE lines)."""

    thermal: int | None = None
    """0 nominal, 1 fair, 2 serious, 3 critical."""
    battery: float | None = None
    """Percent 0-100 (fractions are scaled on parsing; -1 becomes None)."""
    battery_state: str | None = None
    free_gb: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TrialEvent(ReadingsEvent):
    kind: ClassVar[str] = "trial"
    trial: int | None = None
    warmup: bool = False
    prompt_tokens: int | None = None
    prompt_tps: float | None = None
    decode_tps: float | None = None
    gen: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class IdleEvent(ReadingsEvent):
    kind: ClassVar[str] = "idle"


@dataclass(frozen=True, slots=True, kw_only=True)
class EndEvent(RecordEvent):
    kind: ClassVar[str] = "end"
    reason: str | None = None
    trials: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorEvent(RecordEvent):
    kind: ClassVar[str] = "error"
    message: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class TextEvent(RecordEvent):
    """Any other line: kept, shown, recorded and counted."""

    kind: ClassVar[str] = "text"


Phase = Literal[
    "idle",
    "installing",
    "launching",
    "loading",
    "warmup",
    "running",
    "cooling",
    "done",
    "aborted",
]
"""The controller's phases, recorded as these strings (docs/spec/cli.md)."""
PHASES: tuple[Phase, ...] = get_args(Phase)


@dataclass(frozen=True, slots=True, kw_only=True)
class PhaseEvent(Event):
    """The controller moved to another phase.

    A recording made by a later version may hold a phase this one does not know: it is read
    back as the string it was, never dropped.
    """

    kind: ClassVar[str] = "phase"
    phase: Phase
    reason: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class CooldownEvent(Event):
    """Progress of a cooldown gate (protocol v2: min_s, until thermal, capped at cap_s)."""

    kind: ClassVar[str] = "cooldown"
    elapsed_s: float
    min_s: float
    cap_s: float
    until: str
    """Target thermal name, or "none" (time alone)."""
    thermal: int | None = None
    basis: str = "time"
    """Where the thermal reading came from: "app", "host" or "time"."""
    done: bool = False
    reason: str = ""
    """Why it ended: "cool", "cap", "min", "skipped", "aborted" (the session was)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class MarkerEvent(Event):
    """An operator's note."""

    kind: ClassVar[str] = "marker"
    note: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordingFailedEvent(MarkerEvent):
    """The recording cannot be written (a full disk; `note` says why): the session ends
    (`feeds.lifecycle` stops every run and leaves the view) and the command exits 2. Shown as
    the marker it is to a person; never recorded (it comes once the recorder has stopped
    writing), so not in EVENT_TYPES."""

    kind: ClassVar[str] = "recording_failed"


@dataclass(frozen=True, slots=True, kw_only=True)
class GapEvent(Event):
    """The device or the mirror became unreachable (state "begin") or came back ("end")."""

    kind: ClassVar[str] = "gap"
    state: str
    reason: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ResetEvent(Event):
    """The mirrored log was replaced by another log; what follows is read from its start. Or,
    with `read_on`, the same log changed before what was read (rotated, rewritten with an
    earlier line changed), read on after its last line read."""

    kind: ClassVar[str] = "reset"
    reason: str = ""
    """What happened, and what was not read again."""
    read_on: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class TelemetryEvent(Event):
    """Host-side readings from the device backend (the host cannot read thermal state)."""

    battery: float | None = None
    """Percent 0-100."""
    battery_state: str | None = None
    temperature_c: float | None = None
    """Battery temperature, the host's only proxy for heat."""
    free_gb: float | None = None
    total_gb: float | None = None
    power_w: float | None = None
    """Device power from the battery's current x voltage, positive = drawing (v2)."""
    charging: bool | None = None
    plugged: bool | None = None
    # v3, the phone's own system load (PowerTelemetryData, issue: energy with the cable in)
    load_w: float | None = None
    """What the whole phone draws, whatever feeds it (PowerTelemetryData SystemLoad)."""
    power_in_w: float | None = None
    """What the adapter delivers (SystemPowerIn)."""
    battery_power_w: float | None = None
    """Into (+) or out of (-) the battery (BatteryPower)."""
    load_changed_t: float | None = None
    """Session seconds of the reading at which the phone last changed these three values: the
    phone refreshes them every 10-60 s, so a reading may hold an older value."""
    # v3, the bench app's process (DVT sysmontap and graphics)
    pid: int | None = None
    """The bench app's process the readings below are of."""
    cpu_pct: float | None = None
    """The app's CPU, % of one core as top shows it (may pass 100)."""
    mem_gb: float | None = None
    """The app's physical footprint, GB = 10^9 bytes (what jetsam counts)."""
    gpu_pct: float | None = None
    """The GPU's Device Utilization %, the whole phone's (graphics sampling)."""

    kind: ClassVar[str] = "telemetry"


SUMMARY_VERSION = 3
"""The rules the per-arm summary follows (line-protocol.md): 3, the energy rules of version 3.
Said as `summary_version` in every per-arm JSON object and in a recording's closing summary."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SummaryEvent(Event):
    """v2: the last line of a recording that closed normally. The session's per-arm summary
    and the facts a session index lists (`anemon sessions`), so that it reads a recording's
    first and last lines, not every event. Not a record: the Session only counts it."""

    kind: ClassVar[str] = "summary"
    status: str
    """The session's end: "done", "failed", "aborted" (a plan run, as its exit status says);
    a watch has no verdict of its own: "incomplete" when an arm has no END."""
    tag: str | None = None
    created: str | None = None
    """When the session began (its header's ISO-8601 `created`): an appended session's own."""
    device: str | None = None
    """The device's name, where a backend read it."""
    udid: str | None = None
    backend: str | None = None
    os_build: str | None = None
    """The OS build: the app's START `os`, else what the backend read."""
    trials: int = 0
    """Timed trials of every arm."""
    arms: tuple[Mapping[str, object], ...] = ()
    """Per arm, the summary object of line-protocol.md (`ArmSummary.to_json()`)."""
    summary_version: int | None = None
    """The rules `arms` follow (3: the energy rules of version 3); None in a recording made
    before version 3, whose J/token came from older rules."""


CheckStatus = Literal["pass", "warn", "fail"]
"""A pre-flight check's verdict. A recording made by a later version may hold one this version
does not know: it is read back as the string it was, never dropped."""
CHECK_STATUSES: tuple[CheckStatus, ...] = get_args(CheckStatus)
"""From best to worst."""


@dataclass(frozen=True, slots=True)
class Check:
    """One pre-flight check: its verdict, what was read, and (when not a plain pass) why or
    what to do. Recorded as an object of these four fields, all text."""

    check: str
    status: CheckStatus
    reading: str
    note: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class PreflightEvent(Event):
    """The checks a run makes before its first launch (docs/spec/cli.md "pre-flight")."""

    kind: ClassVar[str] = "preflight"
    status: CheckStatus = "pass"
    """The worst verdict."""
    checks: tuple[Check, ...] = ()
    forced: bool = False
    """A check failed and the run went on (`--force`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AlertEvent(Event):
    """A condition of the plan's `[alerts]` was met (at most once per arm and condition)."""

    kind: ClassVar[str] = "alert"
    alert: str
    """Which condition: "thermal", "decode_drop", "battery_floor", "disk_floor", "charging"."""
    value: float | str | None = None
    """What was read: a number, or a name (a thermal state, "charging", "not charging")."""
    threshold: float | str | None = None
    """The plan's threshold (a number, or a thermal state's name)."""
    note: str = ""
    """The alert in words, as it is shown."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CrashEvent(Event):
    """v3: a crash or jetsam report naming the bench app appeared on the phone during the run
    (crash reports, DVT issue): its round ends as failed with `reason`."""

    kind: ClassVar[str] = "crash"
    report: str
    """"crash" (the app's own crash report) or "jetsam" (a JetsamEvent naming it)."""
    reason: str = ""
    """In words, as a round's failure reason: "jetsam: per-process-limit at 2.2 GB",
    "exited on signal 9"."""
    footprint_gb: float | None = None
    """The app's footprint when it was killed (jetsam: rpages x pageSize), GB = 10^9 bytes."""
    file: str = ""
    """The report's file name on the phone (copied next to the recording)."""
    process: str = ""
    """The process the report names."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ReportEvent(Event):
    """v3: what another tool reported of one round as a whole, where its trials cannot say it
    (a foreign format: docs/spec/yardstick.md). The summary takes these figures as given; a
    field left None is computed from the trials as for anemon's own."""

    kind: ClassVar[str] = "report"
    tool: str = ""
    """Whose report: "yardstick"."""
    tokens: int | None = None
    """Tokens the round generated (its trials are rates, not counts)."""
    thermal_start: int | None = None
    thermal_peak: int | None = None
    thermal_end: int | None = None
    """The thermal states it reports (0 nominal to 3 critical), with no time."""
    energy_j: float | None = None
    j_per_token: float | None = None
    power_w: float | None = None
    """Its mean power over its energy window."""
    battery_drop: float | None = None
    """Battery percent the round drew down."""
    energy_note: str = ""
    """Where the energy figures came from, in words (the summary's `energy_note`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class UnknownEvent(Event):
    """A recorded kind this version does not know: kept and written back as it was."""

    kind: ClassVar[str] = "unknown"
    name: str
    fields: Mapping[str, object] = field(default_factory=lambda: _EMPTY)


EVENT_TYPES: dict[str, type[Event]] = {
    cls.kind: cls
    for cls in (
        StartEvent,
        LoadEvent,
        TrialEvent,
        IdleEvent,
        EndEvent,
        ErrorEvent,
        TextEvent,
        PhaseEvent,
        CooldownEvent,
        MarkerEvent,
        GapEvent,
        ResetEvent,
        TelemetryEvent,
        SummaryEvent,
        PreflightEvent,
        AlertEvent,
        CrashEvent,
        ReportEvent,
    )
}
"""Known kinds by their recorded name."""
