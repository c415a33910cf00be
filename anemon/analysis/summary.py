"""The per-arm summary of spec/line-protocol.md, computed with pandas from the Session."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from anemon.events import thermal_name
from anemon.store import ArmSeries, Session

SERIOUS = 2


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
    frame = trials_frame(arm)
    timed = frame[frame["warmup"] == 0]
    decode = timed["decode_tps"].dropna()
    thermal = timed["thermal"].dropna()
    battery = timed["battery"].dropna()
    serious = timed.loc[timed["thermal"] >= SERIOUS, "app_t"]
    return ArmSummary(
        arm=arm.name,
        trials=len(timed),
        tokens=int(timed["gen"].fillna(0).sum()),
        decode_mean=_value(decode.mean()),
        decode_first3=_value(decode.head(3).mean()),
        decode_last3=_value(decode.tail(3).mean()),
        decode_min=_value(decode.min()),
        decode_max=_value(decode.max()),
        prefill_mean=_value(timed["prompt_tps"].mean()),
        thermal_start=_int(thermal.head(1)),
        thermal_end=_int(thermal.tail(1)),
        serious_at_s=_value(serious.iloc[0]) if len(serious) else None,
        battery_start=_value(battery.iloc[0]) if len(battery) else None,
        battery_end=_value(battery.iloc[-1]) if len(battery) else None,
        errors=arm.errors,
        rounds=_rounds(timed, arm.rounds),
    )


def _rounds(timed: pd.DataFrame, launches: int) -> tuple[RoundSummary, ...]:
    grouped = timed.groupby("round")
    counts = grouped.size()
    decode = grouped["decode_tps"].mean()
    prefill = grouped["prompt_tps"].mean()
    result = []
    for number in range(1, max(launches, int(counts.index.max()) if len(counts) else 0) + 1):
        result.append(
            RoundSummary(
                trials=int(counts.get(number, 0)),
                decode_mean=_value(decode.get(number)),
                prefill_mean=_value(prefill.get(number)),
            )
        )
    return tuple(result)


def _value(x: object) -> float | None:
    if x is None:
        return None
    value = float(x)  # type: ignore[arg-type]
    return None if math.isnan(value) else value


def _int(series: pd.Series) -> int | None:
    return int(series.iloc[0]) if len(series) else None
