"""The per-arm summary of docs/spec/line-protocol.md, computed with numpy from the Session
(no pandas: `anemon summary` of a small log starts fast)."""

from __future__ import annotations

import dataclasses
import math
import operator
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, SupportsFloat

import numpy as np

from anemon.analysis.growing import Column, TimeSeries
from anemon.analysis.reported import Reported
from anemon.analysis.sustained import (
    SMALL,
    Sustained,
    Values,
    at_least,
    elapsed,
    present,
    sustained_figures,
    total,
    where,
)
from anemon.analysis.system_load import STALE_NOTE, LoadReadings, LoadSteps
from anemon.events import SUMMARY_VERSION, CrashEvent, TelemetryEvent, thermal_name
from anemon.store import ArmSeries, Session
from anemon.store.session import BATTERY_CODES, PROCESS_FIELDS

if TYPE_CHECKING:
    from array import array

    from anemon.store.readings import Columns

SERIOUS = 2
_SUMMARY_COLUMNS = ("t", "app_t", "round", "prompt_tps", "decode_tps", "gen", "battery", "thermal")
EnergySource = Literal["battery", "system load", "reported"]
"""Where an arm's energy figures came from: the battery's current x voltage (unplugged), or
the phone's own system load (plugged in), or what the tool that wrote a foreign record
reported (`Reported`, its `energy_note` says how it measured); never two in one figure."""
PLUGGED_STATES = frozenset({"charging", "full"})
"""battery_state values that mean the phone was on the charger ("full" is plugged in)."""
_PLUGGED_CODES = [BATTERY_CODES[state] for state in PLUGGED_STATES]
Status = Literal["done", "failed", "aborted", "incomplete"]
"""How an arm's last round ended (line-protocol.md, summary version 2)."""
NO_END = "the log stops with no END"


@dataclass(frozen=True, slots=True)
class RoundSummary:
    """One launch of an arm: its trials, its means, and the figures of its course (thermal,
    sustained), which a table shows per round for an arm of several (line-protocol.md)."""

    trials: int
    decode_mean: float | None
    prefill_mean: float | None
    thermal_start: int | None
    thermal_end: int | None
    serious_at_s: float | None
    burst_tps: float | None
    sustained_tps: float | None
    retained_pct: float | None
    fade_10_s: float | None
    fade_25_s: float | None
    fade_50_s: float | None
    serious_frac: float | None

    def to_json(self) -> dict[str, object]:
        """The spec's `rounds` object: thermal as names."""
        data = dict(zip(_ROUND_FIELDS, _round_values(self), strict=True))
        data["thermal_start"] = thermal_name(self.thermal_start)
        data["thermal_end"] = thermal_name(self.thermal_end)
        return data


@dataclass(frozen=True, slots=True)
class ArmSummary:
    """One row of the lab note's table; field names are the spec's keys."""

    arm: str
    trials: int
    tokens: int
    decode_mean: float | None
    decode_first3: float | None
    decode_last3: float | None
    decode_min: float | None
    decode_max: float | None
    prefill_mean: float | None
    thermal_start: int | None
    thermal_end: int | None
    thermal_peak: int | None
    """The highest thermal state of its timed trials, or the one its tool reported."""
    serious_at_s: float | None
    battery_start: float | None
    battery_end: float | None
    errors: int
    burst_tps: float | None
    sustained_tps: float | None
    retained_pct: float | None
    fade_10_s: float | None
    fade_25_s: float | None
    fade_50_s: float | None
    serious_frac: float | None
    cooldown_s: float | None
    power_w_mean: float | None
    energy_j: float | None
    j_per_token: float | None
    tokens_per_battery_pct: float | None
    energy_note: str | None
    """Why the energy figures are withheld ("charging", "no power samples", "span too short",
    or a stale system load: `STALE_NOTE`), or that they came from the phone's system load
    (`LoadSteps.note`), or where another tool's given figures came from (`Reported`); None
    for figures from the battery (line-protocol.md)."""
    status: Status
    status_reason: str | None
    rounds: tuple[RoundSummary, ...]
    energy_source: EnergySource | None
    mem_peak_gb: float | None = None
    """v3: the app's largest physical footprint (GB = 10^9 bytes) inside the arm's spans."""
    cpu_mean_pct: float | None = None
    """v3: the app's CPU (% of one core), time-weighted over the arm's spans."""
    gpu_mean_pct: float | None = None
    """v3: the GPU's utilization (%), time-weighted over the arm's spans."""

    def to_json(self) -> dict[str, object]:
        """The spec's object: thermal as names, missing values as null. Field by field, not
        `asdict` (which deep-copies every value: most of the JSON of 100,000 arms)."""
        data = dict(zip(_ARM_FIELDS, _arm_values(self), strict=True))
        data["thermal_start"] = thermal_name(self.thermal_start)
        data["thermal_end"] = thermal_name(self.thermal_end)
        data["thermal_peak"] = thermal_name(self.thermal_peak)
        data["rounds"] = [r.to_json() for r in self.rounds]
        data["summary_version"] = SUMMARY_VERSION
        return data


_ARM_FIELDS = tuple(f.name for f in dataclasses.fields(ArmSummary))
_ROUND_FIELDS = tuple(f.name for f in dataclasses.fields(RoundSummary))
_arm_values = operator.attrgetter(*_ARM_FIELDS)  # every field at once: ~3x a getattr each
_round_values = operator.attrgetter(*_ROUND_FIELDS)
_SUSTAINED_FIELDS = tuple(f.name for f in dataclasses.fields(Sustained))
"""A round's last fields, in their order (`_round`)."""


def summarize(session: Session, readings: EnergyReadings | None = None) -> list[ArmSummary]:
    """Every arm seen, in order of first appearance; `readings`: the session's, read as it
    was (`analysis.load`), else read from it now."""
    return list(each_summary(session, readings))


def each_summary(session: Session, readings: EnergyReadings | None = None) -> Iterator[ArmSummary]:
    """`summarize` an arm at a time (JSON of 100,000 arms need not hold them all)."""
    if readings is None:
        readings = EnergyReadings.of(session)
    return (summarize_arm(arm, readings) for arm in session.arms.values())


def summarize_arm(
    arm: ArmSeries, readings: EnergyReadings, spans: Spans | None = None
) -> ArmSummary:
    """Over the non-warm-up trials; numpy on the Session's columns, without copying them into
    a DataFrame first: the live arms table recomputes this for arms of 100k trials and more
    (and passes the arm's `Spans`, which it keeps for its energy figures). An arm of fewer
    than `SMALL` trials is figured on Python lists, to the same bytes (a log of thousands of
    one-trial arms spent most of its summary in numpy's cost per call)."""
    column = _timed_columns(arm)
    decode = present(column["decode_tps"])
    battery = present(column["battery"])
    reported = Reported.of(arm.reports)  # a foreign tool's given figures, over computed ones
    tokens = int(total(present(column["gen"])))
    if reported is not None and reported.tokens is not None:
        tokens = reported.tokens
    battery_start = _value(battery[0]) if len(battery) else None
    battery_end = _value(battery[-1]) if len(battery) else None
    spans = Spans.of(arm) if spans is None else spans
    energy = energy_figures(spans, readings, tokens)
    if reported is not None and reported.energy_note is not None:
        energy = Energy(**{key: getattr(reported, key) for key in _ENERGY_KEYS})
    status, reason = arm_status(arm)
    rounds = _rounds(column, arm.rounds)
    first = _first_round(column, rounds)  # the sustained keys' round
    # one launch: its round's figures are the arm's, from the same trials (not figured twice)
    whole = rounds[0] if len(rounds) == 1 else None
    if whole is None:
        decode_mean, prefill_mean = _mean(decode), _mean(present(column["prompt_tps"]))
        thermal_start, thermal_end, serious_at_s = _thermal(column)
    else:
        decode_mean, prefill_mean = whole.decode_mean, whole.prefill_mean
        thermal_start, thermal_end, serious_at_s = (
            whole.thermal_start, whole.thermal_end, whole.serious_at_s)  # fmt: skip
    thermal_peak = _peak(column["thermal"])
    if reported is not None and thermal_start is None:
        thermal_start, thermal_peak, thermal_end = (
            reported.thermal_start,
            reported.thermal_peak,
            reported.thermal_end,
        )
    return ArmSummary(
        arm=arm.name,
        trials=len(column["gen"]),
        tokens=tokens,
        decode_mean=decode_mean,
        decode_first3=_mean(decode[:3]),
        decode_last3=_mean(decode[-3:]),
        decode_min=_extreme(decode, min),
        decode_max=_extreme(decode, max),
        prefill_mean=prefill_mean,
        thermal_start=thermal_start,
        thermal_end=thermal_end,
        thermal_peak=thermal_peak,
        serious_at_s=serious_at_s,
        battery_start=battery_start,
        battery_end=battery_end,
        errors=arm.errors,
        burst_tps=first.burst_tps,
        sustained_tps=first.sustained_tps,
        retained_pct=first.retained_pct,
        fade_10_s=first.fade_10_s,
        fade_25_s=first.fade_25_s,
        fade_50_s=first.fade_50_s,
        serious_frac=first.serious_frac,
        cooldown_s=arm.cooldown_s,
        power_w_mean=energy.power_w_mean,
        energy_j=energy.energy_j,
        j_per_token=energy.j_per_token,
        tokens_per_battery_pct=energy.tokens_per_battery_pct,
        energy_note=energy.energy_note,
        status=status,
        status_reason=reason,
        rounds=rounds,
        energy_source=energy.energy_source,
        **_shallow(process_figures(spans, readings)),
    )


def _peak(thermal: Values) -> int | None:
    peak = _extreme(present(thermal), max)
    return None if peak is None else int(peak)


Trials = np.ndarray | Sequence[float]
"""An arm's column as numpy reads it, or as the Session holds it (an `array`)."""


def _timed_columns(arm: ArmSeries) -> dict[str, Values]:
    """The arm's timed trials (warm-ups left out), a column each: numpy views, or lists for
    an arm of fewer than `SMALL` trials (`sustained.SMALL`)."""
    if len(arm) < SMALL:
        timed = [w == 0 for w in arm.columns["warmup"]]
        if all(timed):  # the common case: no filtering
            return {name: arm.columns[name].tolist() for name in _SUMMARY_COLUMNS}
        return {name: where(arm.columns[name].tolist(), timed) for name in _SUMMARY_COLUMNS}
    timed = np.frombuffer(arm.columns["warmup"]) == 0
    everyone = bool(timed.all())  # the common case: no copies
    return {
        name: values if everyone else values[timed]
        for name, values in ((n, np.frombuffer(arm.columns[n])) for n in _SUMMARY_COLUMNS)
    }


def _first_round(column: dict[str, Values], rounds: tuple[RoundSummary, ...]) -> RoundSummary:
    """The arm's first round that has timed trials (the top-level sustained keys' round)."""
    number = column["round"]  # 1 and up: a trial before any START is counted in round 1
    if len(number) and len(rounds) > 1:
        return rounds[int(number[0]) - 1]
    return rounds[0] if rounds else _round(column)


def arm_status(arm: ArmSeries) -> tuple[Status, str | None]:
    """How the arm's last round ended, and why in words (None when it is done): as its lines
    and the controller say (`said_status`), unless a crash or jetsam report named the app in
    that round: then failed, for the report's reason (a round done, or aborted by the
    operator, stays so)."""
    status, reason = said_status(arm)
    if arm.crash is None or status in ("done", "aborted"):
        return status, reason
    return "failed", crash_reason(arm.crash)


def crash_reason(crash: CrashEvent) -> str:
    """A report's reason as a round's failure: jetsam always named ("jetsam: ...")."""
    reason = crash.reason or f"{crash.report} report {crash.file}".strip()
    if crash.report == "jetsam" and "jetsam" not in reason.lower():
        return f"jetsam: {reason}"
    return reason


def said_status(arm: ArmSeries) -> tuple[Status, str | None]:
    """How the arm's last round ended by its lines and the controller's word.

    The controller's word comes first (its "done"/"aborted" phase, whose reason is the
    ArmOutcome's `describe()`: "arm (round 2): failed: no trial for 300 s"); then the round's
    END (reason done, error, aborted); then, with no END, an abort marker or an error anemon
    wrote itself (a watchdog): else the log simply stops."""
    verdict = arm.verdict
    if verdict is not None:
        if verdict.phase == "done":
            return "done", None
        said = re.fullmatch(
            re.escape(arm.name) + r"(?: \(round \d+\))?: (done|failed|aborted)(?:: (.*))?",
            verdict.reason,
            flags=re.DOTALL,
        )
        if said is not None and said[1] != "done":
            return ("failed" if said[1] == "failed" else "aborted"), said[2] or None
        status: Status = "failed" if arm.round_error is not None else "aborted"
        return status, verdict.reason or None
    error = arm.round_error.message if arm.round_error is not None else None
    end = arm.round_end
    if end is not None:
        if end.reason == "done":
            return "done", None
        if end.reason == "aborted":
            return "aborted", arm.abort.note if arm.abort is not None else "the app ended: aborted"
        return "failed", error or f"the app ended: {end.reason or 'no reason given'}"
    if arm.abort is not None:
        return "aborted", arm.abort.note
    if arm.round_error is not None and arm.round_error.line.startswith("anemon: ERROR:"):
        return "failed", error
    return "incomplete", NO_END if error is None else f"{NO_END} (last error: {error})"


@dataclass(frozen=True, slots=True)
class ReadingArrays:
    """What the energy figures read, as arrays over session time, each in time order."""

    plugged_t: np.ndarray
    """The times of the host readings that said charging or plugged (an arm's spans bisect
    them, never pass over them all)."""
    power_t: np.ndarray
    power_w: np.ndarray
    """The host's device-power readings that have a power (devicectl's have none)."""
    hold_s: float
    """How far from a span's end its nearest power reading may be held: 2 x `power_s`, the
    interval the readings show (their median gap); 0 with fewer than two readings."""
    battery_t: np.ndarray
    battery: np.ndarray
    """Every battery reading, the app's (TRIAL, IDLE) and the host's (telemetry)."""
    load: LoadSteps
    """The phone's system load, charging or not."""
    process: dict[str, Samples]
    """v3: the bench app's readings (`PROCESS_FIELDS`: mem_gb, cpu_pct, gpu_pct)."""


@dataclass(frozen=True, slots=True)
class Samples:
    """One figure's readings in time order, and how far from a span's end the nearest may be
    held (`hold_s`: 2 x their median gap, as for power)."""

    t: np.ndarray
    value: np.ndarray
    hold_s: float


@dataclass(frozen=True, slots=True)
class ReadingsMark:
    """How many readings `EnergyReadings` held, and of each held figure (power, then the app's
    `PROCESS_FIELDS`) how many, its latest time (-inf: none) and its `hold_s`."""

    readings: int
    updates: int
    counts: tuple[int, ...]
    lasts: tuple[float, ...]
    holds: tuple[float, ...]


class EnergyReadings:
    """The readings the energy figures use: the host's device power and plugged state
    (telemetry) and every battery reading (`Session.battery`). `update` reads only what came
    since (the live arms table keeps one), each into buffers that grow in place
    (`analysis.growing`): `arrays` are views of them, so a 12-hour session's figures cost
    what its first minute's did (copied and sorted each second, they grew with it).

    `power_w` is NaN where a reading had no power (devicectl, an older iOS, an IORegistry
    without current or voltage); `plugged` is true where the reading said charging or plugged
    (the v2 fields, or a version-1 recording's `battery_state`)."""

    def __init__(self) -> None:
        self._read = 0
        """Host readings read (`Session.telemetry`)."""
        self._plugged_t = TimeSeries(gaps=False)
        self._power = TimeSeries()
        self._load = LoadReadings()
        self._battery = TimeSeries(gaps=False)
        self._process = {name: TimeSeries() for name in PROCESS_FIELDS}
        self._arrays: ReadingArrays | None = None
        self._earliest = Column()
        """Each update's earliest new reading time (`settled`)."""

    @classmethod
    def of(cls, session: Session) -> EnergyReadings:
        readings = cls()
        readings.update(session)
        return readings

    def __len__(self) -> int:
        return self._read + len(self._battery)

    @property
    def read(self) -> int:
        """How many of the session's host readings (`Session.telemetry`) were read."""
        return self._read

    def update(self, session: Session) -> None:
        """Read the readings past those already read (a session's only ever grow)."""
        telemetry, battery = session.telemetry, session.battery
        if len(telemetry) <= self._read and battery.count <= len(self._battery):
            return
        earliest = math.inf
        if len(telemetry) > self._read:
            earliest = self._add(telemetry.columns(self._read))
        seen = len(self._battery) - battery.released  # those read are the first of its rows
        t = _floats(battery.t, seen)
        self._battery.extend(t, _floats(battery.value, seen))
        self._earliest.append(min(earliest, float(np.nanmin(t, initial=math.inf))))
        self._arrays = None

    def _add(self, readings: Columns) -> float:
        """New host readings into each buffer that takes it, a column at a time (as `_copy`
        once masked them): what reading them one event at a time put there. Returns the
        earliest of their times."""
        number = {name: _finite_column(readings.numbers[name]) for name in _READ}
        plugged = _plugged_column(readings)
        for i, event in readings.odd.items():  # kept as they came: read as `_finite` reads them
            for name, column in number.items():
                column[i] = _finite(getattr(event, name))
            plugged[i] = _says_plugged(event)
        t = number["t"]
        self._read += len(t)
        timed = t == t  # not NaN
        self._plugged_t.extend(t[timed & plugged], np.ones(int((timed & plugged).sum())))
        power = number["power_w"]
        on_battery = timed & ~plugged & (power == power)  # a reading while charging: no power
        self._power.extend(t[on_battery], power[on_battery])
        load, changed = number["load_w"], number["load_changed_t"]
        for i in np.flatnonzero(timed & (load == load)).tolist():  # few: a phone on the cable
            self._load.add(float(t[i]), float(load[i]), float(changed[i]))
        for name, series in self._process.items():
            value = number[name]
            read = timed & (value == value)
            series.extend(t[read], value[read])
        return float(np.nanmin(t, initial=math.inf))

    def mark(self) -> ReadingsMark:
        """What the readings are now, for `settled`."""
        held = (self._power, *self._process.values())
        return ReadingsMark(
            readings=len(self),
            updates=len(self._earliest),
            counts=tuple(len(s) for s in held),
            lasts=tuple(float(s.t[-1]) if len(s) else -math.inf for s in held),
            holds=tuple(s.hold_s for s in held),
        )

    def settled(self, then: ReadingsMark, spans: Spans) -> bool:
        """Whether the readings added since `then` leave the energy and process figures of
        `spans` as they were then: none came at or before the spans' end, the holds are the
        same, and each held figure (power, the app's) that got readings then already had one
        at or after that end and none after them (a value at the end is interpolated over the
        readings around it, or held, or none). Not with the phone's
        system load: its note reads the whole session. What lets a long session's finished
        arms keep their figures: recomputed for every new reading, 13 arms cost more each
        trial at hour 12 than at minute 1."""
        if then.readings == len(self):
            return True
        if len(self._load):
            return False
        now = self.mark()
        end = max((hi for _, hi in spans.bounds), default=-math.inf)
        since = float(self._earliest.view[then.updates :].min(initial=math.inf))
        return (
            now.holds == then.holds
            and since > end
            and all(
                count == count_now or end <= last <= since
                for last, count, count_now in zip(then.lasts, then.counts, now.counts, strict=True)
            )
        )

    @property
    def arrays(self) -> ReadingArrays:
        """The readings as arrays (views of the buffers' filled parts, which never change)."""
        if self._arrays is None:
            power, battery, load = self._power, self._battery, self._load
            self._arrays = ReadingArrays(
                plugged_t=self._plugged_t.t, power_t=power.t, power_w=power.value,
                hold_s=power.hold_s, battery_t=battery.t, battery=battery.value,
                load=load.steps,
                process={name: Samples(s.t, s.value, s.hold_s)
                         for name, s in self._process.items()},
            )  # fmt: skip
        return self._arrays


@dataclass(frozen=True, slots=True)
class Spans:
    """What an arm's trials say for its energy figures: its span in each round (launch) that
    has timed trials, in session time, and whether a timed trial said it was charging
    (`battery_state` charging, or full: plugged in).

    A span begins where the round's first timed trial began: at the line before it in that
    round (its warm-up TRIAL, else its LOAD, else its START), and ends at its last timed
    trial, so every counted token was generated inside it (line-protocol.md, energy rules
    version 3). With none of those lines (a log that begins mid-round) it begins at the first
    timed trial."""

    bounds: tuple[tuple[float, float], ...]
    plugged: bool

    @classmethod
    def of(cls, arm: ArmSeries) -> Spans:
        if len(arm) < SMALL:
            return cls._of_small(arm)
        warmup = np.frombuffer(arm.columns["warmup"])
        t_all = np.frombuffer(arm.columns["t"])
        number_all = np.frombuffer(arm.columns["round"])
        timed = warmup == 0
        states = np.frombuffer(arm.battery_state, dtype=np.int8)
        if timed.all():
            t, number, index = t_all, number_all, None
        else:
            t, number, index = t_all[timed], number_all[timed], np.flatnonzero(timed)
            states = states[timed]
        plugged = any(bool((states == code).any()) for code in _PLUGGED_CODES)  # np.isin: 20x
        if not len(t):
            return cls((), plugged)
        starts = np.concatenate(([0], np.flatnonzero(number[1:] != number[:-1]) + 1))
        last = np.maximum.reduceat(t, starts)  # rounds come in order: one run of trials each
        firsts = starts if index is None else index[starts]  # in the arm's columns
        bounds = tuple(
            (_began(arm, int(first), t_all, number_all), float(end))
            for first, end in zip(firsts.tolist(), last.tolist(), strict=True)
        )
        return cls(bounds, plugged)

    @classmethod
    def _of_small(cls, arm: ArmSeries) -> Spans:
        """`of` for an arm of fewer than `SMALL` trials, on its columns as they are."""
        t, number = arm.columns["t"], arm.columns["round"]
        timed = [i for i, warmup in enumerate(arm.columns["warmup"]) if warmup == 0]
        plugged = any(arm.battery_state[i] in _PLUGGED_CODES for i in timed)
        runs: list[list[int]] = []  # the timed trials of each round, in order
        for i in timed:
            if runs and number[runs[-1][-1]] == number[i]:
                runs[-1].append(i)
            else:
                runs.append([i])
        bounds = tuple((_began(arm, run[0], t, number), max(t[i] for i in run)) for run in runs)
        return cls(bounds, plugged)


def _began(arm: ArmSeries, first: int, t: Trials, number: Trials) -> float:
    """Where the round of timed trial `first` (an index into the arm's columns) began: the
    line before that trial in its round (a warm-up, else the launch's LOAD or START), never
    after the trial itself."""
    at, round_ = float(t[first]), number[first]
    if first and number[first - 1] == round_:  # a trial of that round before the first timed
        return min(float(t[first - 1]), at)
    launch = int(round_) - 1
    if launch < len(arm.began) and arm.began[launch] <= at:
        return float(arm.began[launch])
    return at


@dataclass(frozen=True, slots=True)
class Energy:
    """The energy keys of an arm's summary."""

    power_w_mean: float | None = None
    energy_j: float | None = None
    j_per_token: float | None = None
    tokens_per_battery_pct: float | None = None
    energy_note: str | None = None
    energy_source: EnergySource | None = None


_ENERGY_KEYS = tuple(f.name for f in dataclasses.fields(Energy))


def energy_figures(spans: Spans, readings: EnergyReadings, tokens: int) -> Energy:
    """The energy figures of line-protocol.md (energy rules version 3).

    A span in which a host reading or a timed trial says charging or plugged gives no figure
    from the battery: a charging phone's battery current is the charger's, not the load. Its
    figures then come from the phone's system load where it was read through every span
    (`_from_load`), else none (`charging`). Otherwise each
    span's joules are the trapezoid of the power readings inside it, from the power at its
    start to the power at its end (interpolated between the readings around each end, or the
    nearest held when it is within `hold_s`); every span must have both, else
    `span too short`. The mean is time-weighted: the joules over the spans' seconds.
    `tokens_per_battery_pct` adds up each span's own battery drop."""
    a = readings.arrays
    if spans.plugged or any(_plugged_within(a, lo, hi) for lo, hi in spans.bounds):
        return _from_load(spans, a.load, tokens) or Energy(energy_note="charging")
    per_pct = _tokens_per_battery_pct(spans, a, tokens)
    if not any(_power_near(a, lo, hi) for lo, hi in spans.bounds):
        return Energy(tokens_per_battery_pct=per_pct, energy_note="no power samples")
    joules = [_span_joules(a, lo, hi) for lo, hi in spans.bounds]
    if any(j is None for j in joules):
        return Energy(tokens_per_battery_pct=per_pct, energy_note="span too short")
    total = sum(j for j in joules if j is not None)
    return _figures(spans, total, tokens, Energy(tokens_per_battery_pct=per_pct,
                                                 energy_source="battery"))  # fmt: skip


def _figures(spans: Spans, total: float, tokens: int, energy: Energy) -> Energy:
    """`energy` with the figures of `total` joules over the spans."""
    energy_j = round(total, 1)
    return dataclasses.replace(
        energy,
        power_w_mean=total / sum(hi - lo for lo, hi in spans.bounds),
        energy_j=energy_j,
        j_per_token=round(energy_j / tokens, 4) if tokens > 0 else None,
    )


def _from_load(spans: Spans, load: LoadSteps, tokens: int) -> Energy | None:
    """The figures from the phone's system load, when it was read through every span (None:
    it was not); a value held an hour or more gives none, and says so. No battery-% figure:
    the battery was charging."""
    bounds = spans.bounds
    if not bounds or not all(hi > lo and load.through(lo, hi) for lo, hi in bounds):
        return None
    if any(load.stale(lo, hi) for lo, hi in bounds):
        return Energy(energy_note=STALE_NOTE)
    total = sum(load.joules(lo, hi) for lo, hi in bounds)
    return _figures(spans, total, tokens, Energy(energy_note=load.note,
                                                 energy_source="system load"))  # fmt: skip


def _plugged_within(a: ReadingArrays, lo: float, hi: float) -> bool:
    """A host reading from `lo` to `hi` said charging or plugged."""
    first = int(a.plugged_t.searchsorted(lo, "left"))  # the method: numpy's wrapper costs more
    return first < len(a.plugged_t) and bool(a.plugged_t[first] <= hi)


def _power_near(a: ReadingArrays, lo: float, hi: float) -> bool:
    """A power reading inside the span, or within `hold_s` of it."""
    first = int(a.power_t.searchsorted(lo - a.hold_s, "left"))
    return first < len(a.power_t) and bool(a.power_t[first] <= hi + a.hold_s)


def _span_joules(a: ReadingArrays, lo: float, hi: float) -> float | None:
    """The trapezoid over the whole span; None when an end has no power or it has no length."""
    return _integral(Samples(a.power_t, a.power_w, a.hold_s), lo, hi)


def _integral(s: Samples, lo: float, hi: float) -> float | None:
    """The trapezoid of `s` over [lo, hi], from its value at `lo` to its value at `hi`
    (`_value_at`); None when an end has no value or the span has no length."""
    start, end = _value_at(s, lo), _value_at(s, hi)
    if start is None or end is None or hi <= lo:
        return None
    between = slice(s.t.searchsorted(lo, "right"), s.t.searchsorted(hi, "left"))
    t = np.concatenate(([lo], s.t[between], [hi]))
    value = np.concatenate(([start], s.value[between], [end]))
    return float(((value[1:] + value[:-1]) / 2 * np.diff(t)).sum())


def _value_at(s: Samples, at: float) -> float | None:
    """The value at `at`: interpolated between the readings around it, or the nearest held
    when none lies beyond it and it is within `hold_s`."""
    t = s.t
    if not len(t):
        return None
    if t[0] <= at <= t[-1]:
        # over the reading at or before `at` and the next only: np.interp reads all it is
        # given (its cost grew with a long session), and its figure comes from those two
        first = int(t.searchsorted(at, "right")) - 1
        return float(np.interp(at, t[first : first + 2], s.value[first : first + 2]))
    nearest = 0 if at < t[0] else -1
    return float(s.value[nearest]) if abs(t[nearest] - at) <= s.hold_s else None


def _tokens_per_battery_pct(spans: Spans, a: ReadingArrays, tokens: int) -> float | None:
    """Tokens over the spans' summed battery drop (each span's: the last reading at or
    before its start, or its first inside when none came before, minus the last at or before
    its end); null under a drop of 1."""
    drop = 0.0
    for lo, hi in spans.bounds:
        start, end = a.battery_t.searchsorted((lo, hi), "right").tolist()
        start, end = start - 1, end - 1
        if start < 0 and len(a.battery_t) and a.battery_t[0] <= hi:
            start = 0  # a log whose app said no battery before its first trial
        if start < 0:
            return None
        drop += float(a.battery[start] - a.battery[end])
    return tokens / drop if spans.bounds and drop >= 1 else None


def with_energy(summary: ArmSummary, spans: Spans, readings: EnergyReadings) -> ArmSummary:
    """`summary` with its energy and process figures recomputed from new readings (the live
    arms table: far cheaper than the whole summary)."""
    energy = energy_figures(spans, readings, summary.tokens)
    process = process_figures(spans, readings)
    return dataclasses.replace(summary, **_shallow(energy), **_shallow(process))


@dataclass(frozen=True, slots=True)
class Process:
    """The three process keys of an arm's summary (v3); None where no reading says."""

    mem_peak_gb: float | None = None
    cpu_mean_pct: float | None = None
    gpu_mean_pct: float | None = None


_FIELDS = {kind: tuple(f.name for f in dataclasses.fields(kind)) for kind in (Energy, Process)}


def _shallow(figures: Energy | Process) -> dict[str, Any]:
    """The figures by name, not `asdict` (which deep-copies: a tenth of 20,000 arms' summary)."""
    return {name: getattr(figures, name) for name in _FIELDS[type(figures)]}


def process_figures(spans: Spans, readings: EnergyReadings) -> Process:
    """The app's readings over the arm's spans (line-protocol.md version 3): the largest
    footprint read inside a span, and CPU and GPU time-weighted as `power_w_mean` is (each
    span's trapezoid over its length), over the seconds of the spans the readings cover."""
    process = readings.arrays.process
    return Process(
        mem_peak_gb=_span_peak(process["mem_gb"], spans),
        cpu_mean_pct=_time_mean(process["cpu_pct"], spans),
        gpu_mean_pct=_time_mean(process["gpu_pct"], spans),
    )


def _span_peak(s: Samples, spans: Spans) -> float | None:
    """The largest reading inside any span; None when none lies inside one."""
    peaks = []
    for lo, hi in spans.bounds:
        first = int(s.t.searchsorted(lo, "left"))
        last = int(s.t.searchsorted(hi, "right"))
        if last > first:
            peaks.append(float(s.value[first:last].max()))
    return max(peaks, default=None)


def _time_mean(s: Samples, spans: Spans) -> float | None:
    """The integral over the part of each span the readings cover (`_covered`), over its
    seconds; None when no span has such a part."""
    total = seconds = 0.0
    for bounds in spans.bounds:
        lo, hi = _covered(s, *bounds)
        integral = _integral(s, lo, hi)
        if integral is not None:
            total, seconds = total + integral, seconds + hi - lo
    return total / seconds if seconds > 0 else None


def _covered(s: Samples, lo: float, hi: float) -> tuple[float, float]:
    """[lo, hi], each end with no value (`_value_at`) moved to the first or last reading inside
    it: a watch that joins a running app has its first CPU reading seconds into the arm's
    span (none in a process's first sample), and the seconds it read still say its mean."""
    if not len(s.t):
        return lo, hi
    if _value_at(s, lo) is None and lo < s.t[0]:
        lo = float(s.t[0])
    if _value_at(s, hi) is None and s.t[-1] < hi:
        hi = float(s.t[-1])
    return lo, hi


def _says_plugged(event: TelemetryEvent) -> bool:
    state = event.battery_state
    return (
        event.charging is True
        or event.plugged is True
        or (isinstance(state, str) and state in PLUGGED_STATES)
    )


_READ = ("t", "power_w", "load_w", "load_changed_t", *PROCESS_FIELDS)
"""The readings' numbers the energy and process figures use."""


def _finite_column(values: np.ndarray) -> np.ndarray:
    """`_finite` of each (the row's NaN is its None): infinities are NaN too."""
    return np.where(np.isfinite(values), values, math.nan)


def _plugged_column(readings: Columns) -> np.ndarray:
    """`_says_plugged` of each reading (a flag's 1.0 is its True)."""
    state = readings.texts["battery_state"]
    said = np.array([s in PLUGGED_STATES for s in state.tolist()], dtype=bool)
    return (readings.numbers["charging"] == 1.0) | (readings.numbers["plugged"] == 1.0) | said


def _floats(values: array, start: int) -> np.ndarray:
    """A Series' column from `start`, copied (an array exporting its buffer cannot grow)."""
    return np.array(values[start:], dtype=np.float64)


def _finite(value: object) -> float:
    """A recorded number, or NaN for null, text, a bool or an infinity (never an error)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return math.nan
    number = float(value)
    return number if math.isfinite(number) else math.nan


def _rounds(column: dict[str, Values], launches: int) -> tuple[RoundSummary, ...]:
    """One entry per launch (START), in order: its trials, means and figures."""
    number = column["round"]
    highest = _extreme(number, max)
    count = max(launches, 0 if highest is None else int(highest))
    if count <= 1:  # one launch: its figures are the arm's (no copies)
        return (_round(column),) if count else ()
    return tuple(_round(_where(column, _equal(number, n))) for n in range(1, count + 1))


def _round(one: dict[str, Values]) -> RoundSummary:
    """The figures of one round's timed trials, in order."""
    thermal_start, thermal_end, serious_at_s = _thermal(one)
    el = elapsed(one["app_t"], one["t"])
    course = sustained_figures(el, one["decode_tps"], one["thermal"])
    return RoundSummary(
        len(one["gen"]), _mean(present(one["decode_tps"])),
        _mean(present(one["prompt_tps"])), thermal_start, thermal_end, serious_at_s,
        *(getattr(course, name) for name in _SUSTAINED_FIELDS),  # not asdict: no deep copies
    )  # fmt: skip


def _thermal(trials: dict[str, Values]) -> tuple[int | None, int | None, float | None]:
    """Thermal start and end (the first and last trial's that has one) and "serious at" (the
    own `t=` of the first at serious or above) of these trials, in order."""
    thermal = present(trials["thermal"])
    serious = where(trials["app_t"], at_least(trials["thermal"], SERIOUS))
    if not len(thermal):
        return None, None, None
    return int(thermal[0]), int(thermal[-1]), _value(serious[0]) if len(serious) else None


def _where(column: dict[str, Values], mask: Values) -> dict[str, Values]:
    return {name: where(values, mask) for name, values in column.items()}


def _equal(values: Values, number: float) -> Values:
    return [x == number for x in values] if isinstance(values, list) else values == number


def _mean(values: Values) -> float | None:
    """values.mean(), as it computes it (the sum over the count) without its per-call setup:
    an arm asks for several, and a log may have thousands of arms."""
    return float(total(values) / len(values)) if len(values) else None


def _extreme(values: Values, which: Callable[..., float]) -> float | None:
    """The `min` or `max` of values without NaN (numpy's own for an array); None for none."""
    if not len(values):
        return None
    if isinstance(values, list) and which(values) != 0:  # a zero: numpy picks its sign
        return _value(which(values))
    array = np.asarray(values)
    return _value(array.min() if which is min else array.max())


def _value(x: SupportsFloat | None) -> float | None:
    if x is None:
        return None
    value = float(x)
    return None if math.isnan(value) else value
