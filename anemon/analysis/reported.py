"""The figures another tool reported of an arm's rounds as a whole (ReportEvent: a foreign
format), which its summary takes as given: its tokens, its thermal start/peak/end and its
energy, with where that energy came from (`energy_note`). anemon's own arms have none."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from anemon.events import ReportEvent


@dataclass(frozen=True, slots=True)
class Reported:
    """What the reports of an arm's rounds add up to; None where a report lacks it."""

    tokens: int | None
    thermal_start: int | None
    thermal_peak: int | None
    thermal_end: int | None
    power_w_mean: float | None
    energy_j: float | None
    j_per_token: float | None
    tokens_per_battery_pct: float | None
    energy_note: str | None
    """Where the energy came from, in words; None: no round reported its energy."""
    energy_source: str | None
    """"reported" when the energy is the other tool's (summary.EnergySource), else None."""

    @classmethod
    def of(cls, reports: Sequence[ReportEvent]) -> Reported | None:
        if not reports:
            return None
        total = _total([r.tokens for r in reports])
        tokens = None if total is None else int(total)
        peaks = [r.thermal_peak for r in reports if r.thermal_peak is not None]
        return cls(
            tokens=tokens,
            thermal_start=reports[0].thermal_start,
            thermal_peak=max(peaks) if peaks else None,
            thermal_end=reports[-1].thermal_end,
            **_energy(reports, tokens),
        )


def _energy(reports: Sequence[ReportEvent], tokens: int | None) -> dict[str, Any]:
    """The energy keys of the summary from every round's report, or none of them: a figure
    over the arm needs every round's (a round's own J/token when there is one round)."""
    notes = list(dict.fromkeys(r.energy_note for r in reports))
    energy_j = _total([r.energy_j for r in reports])
    if energy_j is None or not all(notes):
        return dict.fromkeys(_ENERGY_KEYS)
    drop = _total([r.battery_drop for r in reports])
    watts = [r.power_w for r in reports]
    one = reports[0] if len(reports) == 1 else None
    return {
        "power_w_mean": one.power_w if one else None if None in watts else _mean(watts),
        "energy_j": round(energy_j, 1),
        "j_per_token": one.j_per_token if one and one.j_per_token is not None
        else round(energy_j / tokens, 4) if tokens else None,
        "tokens_per_battery_pct": tokens / drop if tokens and drop and drop >= 1 else None,
        "energy_note": "; ".join(notes),
        "energy_source": "reported",
    }  # fmt: skip


_ENERGY_KEYS = ("power_w_mean", "energy_j", "j_per_token", "tokens_per_battery_pct",
                "energy_note", "energy_source")  # fmt: skip


def _total(values: Sequence[float | None]) -> float | None:
    return None if not values or None in values else sum(v for v in values if v is not None)


def _mean(values: Sequence[float | None]) -> float:
    present = [v for v in values if v is not None]
    return sum(present) / len(present)
