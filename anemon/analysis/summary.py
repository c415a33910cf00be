"""The per-arm summary of docs/spec/line-protocol.md, computed with numpy from the Session
(no pandas: `anemon summary` of a small log starts fast)."""

from __future__ import annotations

import dataclasses
import math
import re
from array import array
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Literal, SupportsFloat

import numpy as np

from anemon.analysis.sustained import Sustained, elapsed, first_round, sustained_figures
from anemon.events import TelemetryEvent, thermal_name
from anemon.store import ArmSeries, Session
from anemon.store.session import BATTERY_CODES

SERIOUS = 2
_SUMMARY_COLUMNS = ("t", "app_t", "round", "prompt_tps", "decode_tps", "gen", "battery", "thermal")
EnergyNote = Literal["charging", "no power samples", "span too short"]
"""Why the energy figures are withheld (line-protocol.md, summary version 2)."""
PLUGGED_STATES = frozenset({"charging", "full"})
"""battery_state values that mean the phone was on the charger ("full" is plugged in)."""
_PLUGGED_CODES = [BATTERY_CODES[state] for state in PLUGGED_STATES]
Status = Literal["done", "failed", "aborted", "incomplete"]
"""How an arm's last round ended (line-protocol.md, summary version 2)."""
NO_END = "the log stops with no END"


@dataclass(frozen=True, slots=True)
class RoundSummary:
    """One launch of an arm."""

    trials: int
    decode_mean: float | None
    prefill_mean: float | None


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
    energy_note: EnergyNote | None
    status: Status
    status_reason: str | None
    rounds: tuple[RoundSummary, ...]

    def to_json(self) -> dict[str, object]:
        """The spec's object: thermal as names, missing values as null. Field by field, not
        `asdict` (which deep-copies every value: most of the JSON of 100,000 arms)."""
        data = {name: getattr(self, name) for name in _ARM_FIELDS}
        data["thermal_start"] = thermal_name(self.thermal_start)
        data["thermal_end"] = thermal_name(self.thermal_end)
        data["rounds"] = [{name: getattr(r, name) for name in _ROUND_FIELDS} for r in self.rounds]
        return data


_ARM_FIELDS = tuple(f.name for f in dataclasses.fields(ArmSummary))
_ROUND_FIELDS = tuple(f.name for f in dataclasses.fields(RoundSummary))


def summarize(session: Session) -> list[ArmSummary]:
    """Every arm seen, in order of first appearance."""
    samples = PowerSamples.of(session.telemetry)
    return [summarize_arm(arm, samples) for arm in session.arms.values()]


def summarize_arm(arm: ArmSeries, samples: PowerSamples, spans: Spans | None = None) -> ArmSummary:
    """Over the non-warm-up trials; numpy on the Session's columns, without copying them into
    a DataFrame first: the live arms table recomputes this for arms of 100k trials and more
    (and passes the arm's `Spans`, which it keeps for its energy figures)."""
    warmup = np.frombuffer(arm.columns["warmup"])
    timed = warmup == 0
    everyone = bool(timed.all())  # the common case: no copies
    column = {
        name: values if everyone else values[timed]
        for name, values in ((n, np.frombuffer(arm.columns[n])) for n in _SUMMARY_COLUMNS)
    }
    decode = _present(column["decode_tps"])
    thermal = _present(column["thermal"])
    battery = _present(column["battery"])
    serious = column["app_t"][column["thermal"] >= SERIOUS]
    tokens = int(np.nansum(column["gen"]))
    battery_start = _value(battery[0]) if len(battery) else None
    battery_end = _value(battery[-1]) if len(battery) else None
    spans = Spans.of(arm) if spans is None else spans
    energy = energy_figures(spans, samples, tokens, battery_start, battery_end)
    status, reason = arm_status(arm)
    sustained = _sustained(column)
    return ArmSummary(
        arm=arm.name,
        trials=len(column["gen"]),
        tokens=tokens,
        decode_mean=_mean(decode),
        decode_first3=_mean(decode[:3]),
        decode_last3=_mean(decode[-3:]),
        decode_min=_value(decode.min()) if len(decode) else None,
        decode_max=_value(decode.max()) if len(decode) else None,
        prefill_mean=_mean(_present(column["prompt_tps"])),
        thermal_start=int(thermal[0]) if len(thermal) else None,
        thermal_end=int(thermal[-1]) if len(thermal) else None,
        serious_at_s=_value(serious[0]) if len(serious) else None,
        battery_start=battery_start,
        battery_end=battery_end,
        errors=arm.errors,
        burst_tps=sustained.burst_tps,
        sustained_tps=sustained.sustained_tps,
        retained_pct=sustained.retained_pct,
        fade_10_s=sustained.fade_10_s,
        fade_25_s=sustained.fade_25_s,
        fade_50_s=sustained.fade_50_s,
        serious_frac=sustained.serious_frac,
        cooldown_s=arm.cooldown_s,
        power_w_mean=energy.power_w_mean,
        energy_j=energy.energy_j,
        j_per_token=energy.j_per_token,
        tokens_per_battery_pct=energy.tokens_per_battery_pct,
        energy_note=energy.energy_note,
        status=status,
        status_reason=reason,
        rounds=_rounds(column, arm.rounds),
    )


def _sustained(column: dict[str, np.ndarray]) -> Sustained:
    """The sustained figures over the arm's first round (its timed trials, in order)."""
    first = first_round(column["round"])
    if first.all():
        one = column  # the common case, one launch: no copies
    else:
        one = {name: column[name][first] for name in ("t", "app_t", "decode_tps", "thermal")}
    el = elapsed(one["app_t"], one["t"])
    return sustained_figures(el, one["decode_tps"], one["thermal"])


def arm_status(arm: ArmSeries) -> tuple[Status, str | None]:
    """How the arm's last round ended, and why in words (None when it is done).

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


class PowerSamples:
    """The host's readings (telemetry) as arrays over session time, for the energy figures;
    `update` reads only the readings that came since (the live arms table keeps one).

    `power_w` is NaN where a reading had no power (devicectl, an older iOS, an IORegistry
    without current or voltage); `plugged` is true where the reading said charging or plugged
    (the v2 fields, or a version-1 recording's `battery_state`)."""

    def __init__(self) -> None:
        self._t = array("d")
        self._power_w = array("d")
        self._plugged = array("b")
        self._arrays: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    @classmethod
    def of(cls, telemetry: Sequence[TelemetryEvent]) -> PowerSamples:
        samples = cls()
        samples.update(telemetry)
        return samples

    def __len__(self) -> int:
        return len(self._t)

    def update(self, telemetry: Sequence[TelemetryEvent]) -> None:
        """Read the readings past those already read (`telemetry` only ever grows)."""
        if len(telemetry) <= len(self._t):
            return
        for event in telemetry[len(self._t) :]:
            self._t.append(_finite(event.t))
            self._power_w.append(_finite(event.power_w))
            self._plugged.append(_says_plugged(event))
        self._arrays = None

    @property
    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """t, power_w and plugged (copies: the buffers stay free to grow)."""
        if self._arrays is None:
            self._arrays = (
                np.array(self._t, dtype=float),
                np.array(self._power_w, dtype=float),
                np.array(self._plugged, dtype=bool),
            )
        return self._arrays


@dataclass(frozen=True, slots=True)
class Spans:
    """What an arm's trials say for its energy figures: its span in each round (launch) that
    has timed trials, from the first to the last of them in session time, and whether a timed
    trial said it was charging (`battery_state` charging, or full: plugged in)."""

    bounds: tuple[tuple[float, float], ...]
    plugged: bool

    @classmethod
    def of(cls, arm: ArmSeries) -> Spans:
        timed = np.frombuffer(arm.columns["warmup"]) == 0
        t = np.frombuffer(arm.columns["t"])
        number = np.frombuffer(arm.columns["round"])
        states = np.frombuffer(arm.battery_state, dtype=np.int8)
        if not timed.all():
            t, number, states = t[timed], number[timed], states[timed]
        plugged = any(bool((states == code).any()) for code in _PLUGGED_CODES)  # np.isin: 20x
        if not len(t):
            return cls((), plugged)
        starts = np.concatenate(([0], np.flatnonzero(number[1:] != number[:-1]) + 1))
        first = np.minimum.reduceat(t, starts)  # rounds come in order: one run of trials each
        last = np.maximum.reduceat(t, starts)
        bounds = tuple(zip(first.tolist(), last.tolist(), strict=True))
        return cls(bounds, plugged)


@dataclass(frozen=True, slots=True)
class Energy:
    """The five energy keys of an arm's summary."""

    power_w_mean: float | None = None
    energy_j: float | None = None
    j_per_token: float | None = None
    tokens_per_battery_pct: float | None = None
    energy_note: EnergyNote | None = None


def energy_figures(
    spans: Spans,
    samples: PowerSamples,
    tokens: int,
    battery_start: float | None,
    battery_end: float | None,
) -> Energy:
    """The energy figures of line-protocol.md "Sustained and energy figures".

    The samples are the readings inside a span (its ends included). A span in which a
    reading or a timed trial says charging or plugged gives no figure at all: a charging
    phone's battery current is the charger's, not the load. Otherwise the power figures need
    two power samples: the mean is over all of them, the energy is each round's trapezoid
    between its own samples, added up; `tokens_per_battery_pct` needs only the battery drop."""
    t, power_w, plugged = samples.arrays
    inside = np.zeros(len(t), dtype=bool)
    per_round = []
    for lo, hi in spans.bounds:
        here = (t >= lo) & (t <= hi)
        inside |= here
        per_round.append(here & ~np.isnan(power_w))
    if spans.plugged or bool(plugged[inside].any()):
        return Energy(energy_note="charging")
    drop = None if battery_start is None or battery_end is None else battery_start - battery_end
    per_pct = tokens / drop if drop is not None and drop >= 1 else None
    count = sum(int(here.sum()) for here in per_round)
    if count < 2:
        note: EnergyNote = "no power samples" if count == 0 else "span too short"
        return Energy(tokens_per_battery_pct=per_pct, energy_note=note)
    joules = sum(_trapezoid(power_w[here], t[here]) for here in per_round)
    energy_j = round(joules, 1)
    return Energy(
        power_w_mean=float(power_w[np.logical_or.reduce(per_round)].mean()),
        energy_j=energy_j,
        j_per_token=round(energy_j / tokens, 4) if tokens > 0 else None,
        tokens_per_battery_pct=per_pct,
    )


def with_energy(summary: ArmSummary, spans: Spans, samples: PowerSamples) -> ArmSummary:
    """`summary` with its energy figures recomputed from new readings (the live arms table:
    far cheaper than the whole summary)."""
    start, end = summary.battery_start, summary.battery_end
    energy = energy_figures(spans, samples, summary.tokens, start, end)
    return dataclasses.replace(summary, **asdict(energy))


def _says_plugged(event: TelemetryEvent) -> bool:
    state = event.battery_state
    return (
        event.charging is True
        or event.plugged is True
        or (isinstance(state, str) and state in PLUGGED_STATES)
    )


def _trapezoid(power: np.ndarray, t: np.ndarray) -> float:
    """Joules between the first and the last sample (none before one, or after the other)."""
    return float(((power[1:] + power[:-1]) / 2 * np.diff(t)).sum())


def _finite(value: object) -> float:
    """A recorded number, or NaN for null, text, a bool or an infinity (never an error)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return math.nan
    number = float(value)
    return number if math.isfinite(number) else math.nan


def _rounds(column: dict[str, np.ndarray], launches: int) -> tuple[RoundSummary, ...]:
    """One entry per launch (START), in order: its trials and its means."""
    number = column["round"]
    count = max(launches, int(number.max()) if len(number) else 0)
    if count <= 1:  # one launch: its figures are the arm's
        decode, prefill = _present(column["decode_tps"]), _present(column["prompt_tps"])
        return (RoundSummary(len(number), _mean(decode), _mean(prefill)),) if count else ()
    return tuple(
        RoundSummary(
            trials=int((number == n).sum()),
            decode_mean=_mean(_present(column["decode_tps"][number == n])),
            prefill_mean=_mean(_present(column["prompt_tps"][number == n])),
        )
        for n in range(1, count + 1)
    )


def _present(values: np.ndarray) -> np.ndarray:
    return values[~np.isnan(values)]


def _mean(values: np.ndarray) -> float | None:
    """values.mean(), as it computes it (the sum over the count) without its per-call setup:
    an arm asks for several, and a log may have thousands of arms."""
    return float(values.sum() / len(values)) if len(values) else None


def _value(x: SupportsFloat | None) -> float | None:
    if x is None:
        return None
    value = float(x)
    return None if math.isnan(value) else value
