"""The Session: the one place views read from, filled by `add(event)`, live or in replay.

Numeric columns are `array('d')` with NaN for a missing value: appending is cheap and
`numpy.frombuffer` gives charts and pandas a zero-copy view. An arm's battery states are
bytes too (`BATTERY_CODES`): a list of a million words would be walked whole by every full
garbage collection, which held a replay's event loop for ~100 ms at a time.
"""

from __future__ import annotations

import math
import operator
from array import array
from collections import Counter, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import numpy as np

from anemon.events import (
    BATTERY_STATES,
    AlertEvent,
    CooldownEvent,
    CrashEvent,
    EndEvent,
    ErrorEvent,
    Event,
    GapEvent,
    IdleEvent,
    LoadEvent,
    MarkerEvent,
    PhaseEvent,
    PreflightEvent,
    RecordEvent,
    RecordingFailedEvent,
    ReportEvent,
    ResetEvent,
    StartEvent,
    TelemetryEvent,
    TrialEvent,
)
from anemon.store.readings import Block, Readings, field_values, present

NAN = float("nan")
LOG_LINES = 5000
_LOGGED = (RecordEvent, PhaseEvent, MarkerEvent, GapEvent, ResetEvent, PreflightEvent, AlertEvent,
           CrashEvent)  # fmt: skip


BATTERY_CODES: dict[str | None, int] = {None: 0} | {
    state: code for code, state in enumerate(BATTERY_STATES, start=1)
}
"""`ArmSeries.battery_state`'s byte for each battery state (0: none said)."""
_BATTERY_NAMES = (None, *BATTERY_STATES)


def battery_codes(states: Iterable[str | None]) -> array:
    """Battery states as `ArmSeries.battery_state` holds them."""
    return array("b", map(BATTERY_CODES.__getitem__, states))


def _num(value: float | int | bool | None) -> float:
    return NAN if value is None else float(value)


@dataclass(slots=True)
class Series:
    """A time series over session time (NaN-free: only present values are appended)."""

    t: array = field(default_factory=lambda: array("d"))
    value: array = field(default_factory=lambda: array("d"))
    kept: bool = True
    """False: what is appended is dropped (a chart's series in a session kept for its figures
    only: `Session.charts`)."""
    released: int = 0
    """Values let go from the front (`release`): `t` and `value` hold those after them."""

    @property
    def count(self) -> int:
        """Every value appended, released or not."""
        return self.released + len(self.t)

    def append(self, t: float, value: float | None) -> None:
        if value is not None and self.kept:
            self.t.append(t)
            self.value.append(value)

    def extend(self, pairs: tuple[array, array]) -> None:
        """`append` for each present value (`present`)."""
        if self.kept:
            self.t.extend(pairs[0])
            self.value.extend(pairs[1])

    def extend_present(self, t: np.ndarray, values: np.ndarray) -> None:
        """`append` for each value not NaN, a column at a time (a raw log's TRIAL runs)."""
        if self.kept:
            present = ~np.isnan(values)
            self.t.frombytes(np.ascontiguousarray(t[present], dtype=float).tobytes())
            self.value.frombytes(np.ascontiguousarray(values[present], dtype=float).tobytes())

    def release(self) -> None:
        """Let go of the values held, keeping their count (`Readings.release`, for the
        battery's readings of a whole-file command's figures)."""
        self.released = self.count
        self.t, self.value = array("d"), array("d")

    def last(self) -> float | None:
        return self.value[-1] if self.value else None


TRIAL_COLUMNS = (
    "t",
    "placed_t",
    "app_t",
    "trial",
    "warmup",
    "round",
    "prompt_tps",
    "decode_tps",
    "gen",
    "battery",
    "thermal",
    "free_gb",
)
"""Numeric columns of an arm's trials (warm-ups included, flagged by `warmup`): `t` when the
line was read, `placed_t` when the app ran it on the session's axis (`ArmSeries.placed`)."""
LEAD_S = 60.0
"""How far a trial's own time may run ahead of when its line was read and still be its time
since the START (a mirror pulled late delays the START, not the clock): more, and its `t=` is
not since the launch (`ArmSeries.placed`)."""
PROCESS_FIELDS = ("mem_gb", "cpu_pct", "gpu_pct")
"""The bench app's process readings (TelemetryEvent v3) an arm keeps as series."""


def has_process(event: TelemetryEvent) -> bool:
    """Whether a reading is of the bench app's process (DVT), not only of the phone's battery."""
    return event.pid is not None or any(getattr(event, f) is not None for f in PROCESS_FIELDS)


_PROCESS_VALUES = operator.attrgetter("pid", *PROCESS_FIELDS)
_NO_PROCESS = (None,) * (1 + len(PROCESS_FIELDS))
BULK_MIN = 64
"""From this many trials and host readings in a row, `Session.extend` adds them a column at
a time (fewer: numpy's cost per call is most of it)."""
NOT_NUMBERS = (TypeError, ValueError, OverflowError)
"""What making an `array("d")` of values raises where one is not a number it takes."""


def in_bulk(event: Event) -> bool:
    """A trial, or a host reading of no process: what `Session.extend` adds by columns."""
    kind = type(event)
    return kind is TrialEvent or (kind is TelemetryEvent and _PROCESS_VALUES(event) == _NO_PROCESS)


def _numbers(items: list[Any]) -> array:
    """Values as `_num` makes each (NaN for None), but a value `array("d")` refuses (a text)
    raises (NOT_NUMBERS) where `_num` might take it."""
    return array("d", [NAN if v is None else v for v in items])


def _not_finite(items: array) -> int:
    """How many of `items` are NaN or infinite."""
    return int(np.count_nonzero(~np.isfinite(np.frombuffer(items)))) if items else 0


@dataclass(slots=True)
class ArmSeries:
    """Every TRIAL of one arm, column by column, plus what its launches said."""

    name: str
    index: int = 0
    """Its place in the order the arms were first seen (0 for the first): its colour."""
    columns: dict[str, array] = field(
        default_factory=lambda: {name: array("d") for name in TRIAL_COLUMNS}
    )
    battery_state: array = field(default_factory=lambda: array("b"))
    """Each trial's battery state as its code (`BATTERY_CODES`, `battery_states()`)."""
    rounds: int = 0
    """How many times the arm was launched (START lines seen)."""
    began: array = field(default_factory=lambda: array("d"))
    """Per launch, the session time of its last line before any trial: its LOAD, else its
    START (where an energy span begins when no warm-up came before the first timed trial)."""
    errors: int = 0
    start: StartEvent | None = None
    load: LoadEvent | None = None
    end: EndEvent | None = None
    round_end: EndEvent | None = None
    """The END of the arm's latest round (None until it comes; a START clears it)."""
    round_error: ErrorEvent | None = None
    """The last error record of the latest round (an app's ERROR line, anemon's watchdog)."""
    verdict: PhaseEvent | None = None
    """The controller's word on the latest launch: its "done" or "aborted" phase, whose
    reason is the ArmOutcome's `describe()` (None for a log anemon did not drive)."""
    abort: MarkerEvent | None = None
    """An abort marker ("abort arm", "abort session ...") during the latest round."""
    outcome_events: int = 0
    """Bumped by each of the above (a view compares it to know the status may have changed)."""
    reports: list[ReportEvent] = field(default_factory=list)
    """What another tool reported of each of its rounds as a whole (a foreign format)."""
    cooldown_s: float | None = None
    """Seconds anemon waited in the cooldown just before the arm's first launch (None: no
    cooldown came before it, as for the first arm or a log anemon did not drive)."""
    process: dict[str, Series] = field(
        default_factory=lambda: {name: Series() for name in PROCESS_FIELDS}
    )
    """The app's memory (GB), CPU (% of a core) and GPU (%) while it ran, as they came
    (only the readings there were: a phone may give one every 3-5 s)."""
    crash: CrashEvent | None = None
    """A crash or jetsam report naming the app during the latest round (a START clears it)."""
    clock: tuple[float, float, float] | None = None
    """The latest launch's clock: its START's session time, the app's time there (its `t=`,
    else 0: the app counts from its launch) and the app's latest time since; None before a
    START."""

    def __len__(self) -> int:
        return len(self.columns["t"])

    def battery_states(self) -> list[str | None]:
        """Each trial's battery state, as said (None where none was)."""
        return [_BATTERY_NAMES[code] for code in self.battery_state]

    def launched(self, event: StartEvent) -> None:
        """A launch's START: the app's clock starts again."""
        app_t = 0.0 if event.app_t is None else event.app_t
        self.clock = (event.t, app_t, app_t)

    def placed(self, event: TrialEvent) -> float:
        """The trial's time on the session's axis: its launch's START time plus the app's own
        time (`t=`) since, so trials read in batches (a mirror pulled every 10 s) keep their
        spacing. When the read time instead: no START or no `t=`, a `t=` below the largest
        since the START (a relaunch the log did not mark), or one more than `LEAD_S` ahead of
        the reading. `place_block` is the same rule for a block of trials."""
        if self.clock is None or event.app_t is None:
            return event.t
        start, app0, latest = self.clock
        if event.app_t < latest:
            return event.t
        self.clock = (start, app0, event.app_t)
        at = start + event.app_t - app0
        return event.t if at > event.t + LEAD_S else at

    def place_block(self, t: np.ndarray, app_t: np.ndarray) -> np.ndarray:
        """`placed` for a block of trials in order (a raw log's, `analysis.load`), with numpy."""
        if self.clock is None:
            return t
        start, app0, latest = self.clock
        known = np.where(np.isnan(app_t), -np.inf, app_t)
        before = np.maximum.accumulate(np.r_[latest, known[:-1]])
        at = start + app_t - app0
        usable = (known >= before) & (at <= t + LEAD_S)
        self.clock = (start, app0, max(latest, float(known.max(initial=-np.inf))))
        return np.where(usable, at, t)

    def add_trial(self, event: TrialEvent) -> None:
        c = self.columns
        c["t"].append(event.t)
        placed = c["placed_t"]
        # never before the arm's previous trial: a line's points stay in order
        placed.append(max(self.placed(event), placed[-1]) if placed else self.placed(event))
        c["app_t"].append(_num(event.app_t))
        c["trial"].append(_num(event.trial))
        c["warmup"].append(1.0 if event.warmup else 0.0)
        c["round"].append(float(max(self.rounds, 1)))
        c["prompt_tps"].append(_num(event.prompt_tps))
        c["decode_tps"].append(_num(event.decode_tps))
        c["gen"].append(_num(event.gen))
        c["battery"].append(_num(event.battery))
        c["thermal"].append(_num(event.thermal))
        c["free_gb"].append(_num(event.free_gb))
        self.battery_state.append(BATTERY_CODES.get(event.battery_state, 0))

    def add_trials(self, made: dict[str, array], codes: array) -> None:
        """`add_trial` for each of a run's trials in order, a column at a time: `made` their
        TRIAL_COLUMNS but `placed_t` and `round` (`_Run`), `codes` their battery states'."""
        c = self.columns
        t, app_t = np.frombuffer(made["t"]), np.frombuffer(made["app_t"])
        placed = c["placed_t"]
        floor = placed[-1] if placed else -math.inf  # never before the arm's previous trial
        at = np.maximum.accumulate(np.maximum(self.place_block(t, app_t), floor))
        for name, column in c.items():
            if name == "placed_t":
                column.frombytes(at.tobytes())
            elif name == "round":
                column.extend(array("d", [float(max(self.rounds, 1))]) * len(t))
            else:
                column.extend(made[name])
        self.battery_state.extend(codes)


@dataclass
class Session:
    """What a session has shown so far; views poll `version` to know when to redraw."""

    arms: dict[str, ArmSeries] = field(default_factory=dict)
    thermal: Series = field(default_factory=Series)
    """Device thermal state (0-3) from TRIAL and IDLE lines."""
    battery: Series = field(default_factory=Series)
    free_gb: Series = field(default_factory=Series)
    temperature_c: Series = field(default_factory=Series)
    """Battery temperature read by the host (telemetry)."""
    power_w: Series = field(default_factory=Series)
    """Device power read by the host (telemetry), positive = drawing."""
    battery_state: str | None = None
    charging: bool | None = None
    """The host's last word on charging (None: it has not said)."""
    counts: Counter[str] = field(default_factory=Counter)
    warnings: int = 0
    timed_trials: int = 0
    """Trials of every arm, warm-ups not counted (kept as they come: a status line of 5,000
    arms would otherwise add them up arm by arm at every redraw)."""
    phase: PhaseEvent | None = None
    cooldown: CooldownEvent | None = None
    current_arm: str | None = None
    cooled: dict[str, float] = field(default_factory=dict)
    """Per arm, the seconds of its ended cooldown whose launch has not STARTed yet."""
    telemetry: Readings = field(default_factory=Readings)
    """Host-side readings as they came (every second from pymobiledevice3), as rows of numbers
    (`store.readings`: a long session's would be most of its objects)."""
    process: TelemetryEvent | None = None
    """The latest reading of the bench app's process (the status line's; None: none came)."""
    crashes: list[CrashEvent] = field(default_factory=list)
    """Every crash or jetsam report of the app seen during the session."""
    markers: list[MarkerEvent] = field(default_factory=list)
    gaps: list[GapEvent] = field(default_factory=list)
    errors: deque[ErrorEvent] = field(default_factory=lambda: deque(maxlen=1000))
    log: deque[Event] = field(default_factory=lambda: deque(maxlen=LOG_LINES))
    """The latest lines and controller/operator events, for the log panel."""
    log_total: int = 0
    """Events ever appended to `log` (a view compares it to know what is new)."""
    first_t: float | None = None
    last_t: float = 0.0
    version: int = 0
    """Bumped by every event."""
    charts: bool = True
    """False: a session kept for its figures only (a whole-file command's, a headless
    replay's): the series only charts draw (`thermal`, `free_gb`, `temperature_c`, `power_w`,
    each arm's `process`) are not kept (a big recording's memory grew with them); `battery`
    is, for the energy figures, which let it go once read (`analysis.load.read_readings`)."""

    def __post_init__(self) -> None:
        for series in (self.thermal, self.free_gb, self.temperature_c, self.power_w):
            series.kept = self.charts

    @classmethod
    def from_events(cls, events: Iterable[Event]) -> Session:
        session = cls()
        session.extend(events)
        return session

    def arm(self, name: str) -> ArmSeries:
        series = self.arms.get(name)
        if series is None:
            series = self.arms[name] = ArmSeries(name, len(self.arms))
            for process in series.process.values():
                process.kept = self.charts
        return series

    def recent_arms(self, count: int) -> list[ArmSeries]:
        """The last `count` arms first seen, in the order they were (a view that cannot show
        thousands of arms shows these; the cost is `count`'s, not the session's)."""
        return list(islice(reversed(self.arms.values()), count))[::-1]

    def add(self, event: Event) -> None:
        self.version += 1
        self.counts[event.kind] += 1
        if self.first_t is None:
            self.first_t = event.t
        self.last_t = max(self.last_t, event.t)
        if isinstance(event, RecordEvent):
            self.warnings += event.warnings
            if event.arm is not None:
                self.current_arm = event.arm
        if isinstance(event, _LOGGED):
            self.log.append(event)
            self.log_total += 1
        handler = _HANDLERS.get(type(event))
        if handler is not None:
            handler(self, event)

    def extend(self, events: Iterable[Event]) -> None:
        """`add` each of `events` in order, and the same Session as that, but each run of
        BULK_MIN trials and host readings (`in_bulk`) added a column at a time: a seek to the
        end of a 10,000-trial replay added its 20,000 events one by one in ~90 ms."""
        run: list[Event] = []
        for event in events:
            if in_bulk(event):
                run.append(event)
                continue
            if run:
                self._add_run(run)
                run = []
            self.add(event)
        if run:
            self._add_run(run)

    def _add_run(self, run: list[Event]) -> None:
        """By columns (`_Run`); one by one where few, or where a value is not as the codec
        gives it (`add` then does with it whatever it does)."""
        made = _Run.of(run) if len(run) >= BULK_MIN else None
        if made is None:
            for event in run:
                self.add(event)
            return
        self.version += len(run)
        for kind, count in (("trial", len(made.trials)), ("telemetry", made.readings.count)):
            if count:  # no kind counted that did not come
                self.counts[kind] += count
        if self.first_t is None:
            self.first_t = run[0].t
        self.last_t = max(self.last_t, *made.t)
        self._add_trials(made)
        self._add_readings(made)
        self.battery_state = _last(field_values(run, "battery_state"), self.battery_state)

    def _add_trials(self, made: _Run) -> None:
        trials = made.trials
        self.warnings += sum(e.warnings for e in trials)
        self.current_arm = _last(field_values(trials, "arm"), self.current_arm)
        self.log.extend(trials)
        self.log_total += len(trials)
        for name, indices in made.arms.items():  # in the order first seen: the arms' order
            if len(indices) == len(trials):
                self.arm(name).add_trials(made.trial, made.codes)
                continue
            mine = {column: array("d", [v[i] for i in indices]) for column, v in made.trial.items()}
            self.arm(name).add_trials(mine, array("b", [made.codes[i] for i in indices]))
        self.timed_trials += sum(not e.warmup for e in trials)
        self.thermal.extend(made.thermal)

    def _add_readings(self, made: _Run) -> None:
        self.battery.extend(made.battery)
        self.free_gb.extend(made.free_gb)
        readings = made.readings
        self.telemetry.put(readings)
        self.temperature_c.extend(readings.present("temperature_c"))
        self.power_w.extend(readings.present("power_w"))
        self.charging = _last(readings.values("charging"), self.charging)

    def _on_start(self, event: StartEvent) -> None:
        arm = self._record_arm(event)
        cooled = self.cooled.pop(arm.name, None)
        if arm.rounds == 0:
            arm.cooldown_s = cooled
        arm.rounds += 1
        arm.began.append(event.t)
        arm.start = event
        arm.launched(event)
        arm.round_end = arm.round_error = arm.verdict = arm.abort = arm.crash = None
        arm.outcome_events += 1
        self.free_gb.append(event.t, event.free_gb)

    def _on_load(self, event: LoadEvent) -> None:
        arm = self._record_arm(event)
        arm.load = event
        if arm.began:  # the launch's LOAD: a later line than its START
            arm.began[-1] = event.t

    def _on_trial(self, event: TrialEvent) -> None:
        self._record_arm(event).add_trial(event)
        self.timed_trials += not event.warmup
        self._on_device_state(event)

    def _on_idle(self, event: IdleEvent) -> None:
        self._on_device_state(event)

    def _on_device_state(self, event: TrialEvent | IdleEvent) -> None:
        self.thermal.append(event.t, event.thermal)
        self.battery.append(event.t, event.battery)
        self.free_gb.append(event.t, event.free_gb)
        if event.battery_state is not None:
            self.battery_state = event.battery_state

    def _on_end(self, event: EndEvent) -> None:
        arm = self._record_arm(event)
        arm.end = arm.round_end = event
        arm.outcome_events += 1

    def _on_error(self, event: ErrorEvent) -> None:
        self.errors.append(event)
        if event.arm is not None:
            arm = self.arm(event.arm)
            arm.errors += 1
            arm.round_error = event
            arm.outcome_events += 1

    def _on_telemetry(self, event: TelemetryEvent) -> None:
        self.telemetry.append(event)
        self.battery.append(event.t, event.battery)
        self.free_gb.append(event.t, event.free_gb)
        self.temperature_c.append(event.t, event.temperature_c)
        self.power_w.append(event.t, event.power_w)
        if event.charging is not None:
            self.charging = event.charging
        if event.battery_state is not None:
            self.battery_state = event.battery_state
        if has_process(event):
            self._on_process(event)

    def _on_process(self, event: TelemetryEvent) -> None:
        """The app's readings go to the arm they name, else the arm whose lines came last."""
        self.process = event
        name = event.arm or self.current_arm
        if name is None:
            return
        series = self.arm(name).process  # the arm is seen, charted or not
        for field_name in PROCESS_FIELDS:
            series[field_name].append(event.t, getattr(event, field_name))

    def _on_crash(self, event: CrashEvent) -> None:
        self.crashes.append(event)
        name = event.arm or self.current_arm
        if name is not None:
            arm = self.arm(name)
            arm.crash = event
            arm.outcome_events += 1

    def _on_phase(self, event: PhaseEvent) -> None:
        self.phase = event
        if event.phase != "cooling":
            self.cooldown = None
        arm = self.arms.get(event.arm) if event.arm is not None else None
        if arm is not None and event.phase in ("done", "aborted"):
            arm.verdict = event
            arm.outcome_events += 1

    def _on_marker(self, event: MarkerEvent) -> None:
        self.markers.append(event)
        if event.note == "abort arm" or event.note.startswith("abort session"):
            name = event.arm or self.current_arm
            arm = self.arms.get(name) if name is not None else None
            if arm is not None and arm.round_end is None and arm.verdict is None:
                arm.abort = event
                arm.outcome_events += 1

    def _on_cooldown(self, event: CooldownEvent) -> None:
        self.cooldown = None if event.done else event
        if event.done and event.arm is not None and isinstance(event.elapsed_s, int | float):
            self.cooled[event.arm] = round(float(event.elapsed_s), 1)

    def _record_arm(self, event: RecordEvent) -> ArmSeries:
        return self.arm(event.arm or "(no arm)")


@dataclass(frozen=True, slots=True)
class _Run:
    """A run of trials and host readings (`in_bulk`) made into what `Session.add` keeps of
    them, before any is kept: `of` gives None where one value is not as the codec gives it
    (not a number, a time not finite, a reading `Readings.append` would keep as it came)."""

    t: list[Any]
    trials: list[TrialEvent]
    trial: dict[str, array]
    """The trials' TRIAL_COLUMNS but `placed_t` and `round` (the arm's)."""
    codes: array
    arms: dict[str, list[int]]
    """Each arm's trials (their indices), in the order the arms are first seen."""
    thermal: tuple[array, array]
    """The trials' thermal states as the session's series keeps them (`present`)."""
    battery: tuple[array, array]
    free_gb: tuple[array, array]
    """Of trials and readings alike, in order."""
    readings: Block

    @classmethod
    def of(cls, run: list[Event]) -> _Run | None:
        trials = [e for e in run if type(e) is TrialEvent]
        readings = Block.of([e for e in run if type(e) is TelemetryEvent])
        t = field_values(run, "t")
        try:
            trial = {name: _numbers(field_values(trials, name)) for name in _TRIAL_NUMBERS}
            trial["warmup"] = array("d", [1.0 if e.warmup else 0.0 for e in trials])
            codes = array("b", [BATTERY_CODES.get(e.battery_state, 0) for e in trials])
            times = array("d", t)
            thermal = present(field_values(trials, "t"), field_values(trials, "thermal"))
            battery = present(t, field_values(run, "battery"))
            free_gb = present(t, field_values(run, "free_gb"))
        except (*NOT_NUMBERS, TypeError):  # TypeError: a battery state that is not a key
            return None
        arms = field_values(trials, "arm")
        if (
            readings is None
            or _not_finite(times)
            or _not_finite(trial["app_t"]) != field_values(trials, "app_t").count(None)
            or not set(map(type, arms)) <= {str, type(None)}
            or not set(map(type, field_values(trials, "warnings"))) <= {int}
        ):
            return None
        by_arm: dict[str, list[int]] = {}
        for index, name in enumerate(arms):
            by_arm.setdefault(name or "(no arm)", []).append(index)
        return cls(t, trials, trial, codes, by_arm, thermal, battery, free_gb, readings)


_TRIAL_NUMBERS = tuple(n for n in TRIAL_COLUMNS if n not in ("placed_t", "round", "warmup"))
"""The TRIAL_COLUMNS taken from each trial's field of that name."""


def _last(items: list[Any], default: Any) -> Any:
    """The last of `items` that is not None, else `default`."""
    return next((v for v in reversed(items) if v is not None), default)


_HANDLERS: dict[type[Event], Callable[[Session, Any], None]] = {
    StartEvent: Session._on_start,
    LoadEvent: Session._on_load,
    TrialEvent: Session._on_trial,
    IdleEvent: Session._on_idle,
    EndEvent: Session._on_end,
    ErrorEvent: Session._on_error,
    TelemetryEvent: Session._on_telemetry,
    PhaseEvent: Session._on_phase,
    CooldownEvent: Session._on_cooldown,
    MarkerEvent: Session._on_marker,
    CrashEvent: Session._on_crash,
    RecordingFailedEvent: Session._on_marker,  # a marker to a person
    GapEvent: lambda session, event: session.gaps.append(event),
    ReportEvent: lambda session, event: session._record_arm(event).reports.append(event),
}
