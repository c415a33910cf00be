"""The per-arm summary of docs/spec/line-protocol.md, computed with pandas from the Session."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import SupportsFloat

import numpy as np
import pandas as pd

from anemon.events import thermal_name
from anemon.store import ArmSeries, Session

SERIOUS = 2
_SUMMARY_COLUMNS = ("app_t", "round", "prompt_tps", "decode_tps", "gen", "battery", "thermal")


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
    rounds: tuple[RoundSummary, ...]

    def to_json(self) -> dict[str, object]:
        """The spec's object: thermal as names, missing values as null."""
        data = asdict(self)
        data["thermal_start"] = thermal_name(self.thermal_start)
        data["thermal_end"] = thermal_name(self.thermal_end)
        data["rounds"] = [asdict(r) for r in self.rounds]
        return data


def trials_frame(arm: ArmSeries) -> pd.DataFrame:
    """The arm's trials as a DataFrame (NaN where a value was missing), warm-ups included."""
    frame = pd.DataFrame({name: np.frombuffer(col) for name, col in arm.columns.items()})
    frame["battery_state"] = pd.Series(arm.battery_state, dtype="object")
    return frame


def summarize(session: Session) -> list[ArmSummary]:
    """Every arm seen, in order of first appearance."""
    return [summarize_arm(arm) for arm in session.arms.values()]


def summarize_arm(arm: ArmSeries) -> ArmSummary:
    """Over the non-warm-up trials; numpy on the Session's columns, without copying them into
    a DataFrame first: the live arms table recomputes this for arms of 100k trials and more."""
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
    return ArmSummary(
        arm=arm.name,
        trials=len(column["gen"]),
        tokens=int(np.nansum(column["gen"])),
        decode_mean=_mean(decode),
        decode_first3=_mean(decode[:3]),
        decode_last3=_mean(decode[-3:]),
        decode_min=_value(decode.min()) if len(decode) else None,
        decode_max=_value(decode.max()) if len(decode) else None,
        prefill_mean=_mean(_present(column["prompt_tps"])),
        thermal_start=int(thermal[0]) if len(thermal) else None,
        thermal_end=int(thermal[-1]) if len(thermal) else None,
        serious_at_s=_value(serious[0]) if len(serious) else None,
        battery_start=_value(battery[0]) if len(battery) else None,
        battery_end=_value(battery[-1]) if len(battery) else None,
        errors=arm.errors,
        rounds=_rounds(column, arm.rounds),
    )


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
    return float(values.mean()) if len(values) else None


def _value(x: SupportsFloat | None) -> float | None:
    if x is None:
        return None
    value = float(x)
    return None if math.isnan(value) else value
