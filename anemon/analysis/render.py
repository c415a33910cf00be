"""The per-arm summary as a rich table, a Markdown lab-note table, CSV and JSON."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

import pandas as pd
from rich.table import Table
from rich.text import Text

from anemon.analysis.summary import ArmSummary
from anemon.events import thermal_name

COLUMNS = (
    "arm",
    "trials",
    "tokens",
    "decode mean",
    "first 3 → last 3",
    "min / max",
    "prefill mean",
    "thermal",
    "serious at",
    "battery",
    "errors",
)


def fmt(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def per_round(summary: ArmSummary, pick: Callable[..., float | None], digits: int) -> str:
    """One figure, or one per launch written "a / b" (A/B runs report both rounds)."""
    if len(summary.rounds) > 1:
        return " / ".join(fmt(pick(r), digits) for r in summary.rounds)
    return fmt(pick(summary), digits)


def cells(s: ArmSummary) -> tuple[str, ...]:
    """The table's cells for one arm; thermal stands beside every figure."""
    thermal = f"{thermal_name(s.thermal_start) or '—'} → {thermal_name(s.thermal_end) or '—'}"
    return (
        s.arm,
        str(s.trials),
        f"{s.tokens:,}",
        per_round(s, lambda x: x.decode_mean, 1),
        f"{fmt(s.decode_first3)} → {fmt(s.decode_last3)}",
        f"{fmt(s.decode_min)} / {fmt(s.decode_max)}",
        per_round(s, lambda x: x.prefill_mean, 0),
        thermal,
        "—" if s.serious_at_s is None else f"{s.serious_at_s:.0f} s",
        f"{fmt(s.battery_start, 0)} → {fmt(s.battery_end, 0)} %",
        str(s.errors),
    )


def rich_table(summaries: Sequence[ArmSummary], title: str | None = None) -> Table:
    """Cells and title are `Text`: arm names and paths are data, never markup."""
    table = Table(title=Text(title) if title else None, header_style="bold")
    for i, name in enumerate(COLUMNS):
        table.add_column(name, justify="left" if i == 0 else "right")
    for s in summaries:
        table.add_row(*(Text(cell) for cell in cells(s)))
    return table


def markdown(summaries: Sequence[ArmSummary]) -> str:
    def row(values: Sequence[str]) -> str:
        return "| " + " | ".join(v.replace("|", "\\|") for v in values) + " |"

    lines = [row(COLUMNS), "|" + "---|" * len(COLUMNS)]
    lines += [row(cells(s)) for s in summaries]
    return "\n".join(lines) + "\n"


def to_json(summaries: Sequence[ArmSummary]) -> str:
    return json.dumps([s.to_json() for s in summaries], indent=2) + "\n"


def to_csv(summaries: Sequence[ArmSummary]) -> str:
    """Flat rows: the spec's keys, with `rounds` as the number of launches and their means."""
    rows = []
    for s in summaries:
        data = s.to_json()
        del data["rounds"]  # re-added last, as a count
        data["rounds"] = len(s.rounds)
        data["round_decode_means"] = " / ".join(fmt(r.decode_mean, 2) for r in s.rounds)
        data["round_prefill_means"] = " / ".join(fmt(r.prefill_mean, 1) for r in s.rounds)
        rows.append(data)
    return pd.DataFrame(rows).to_csv(index=False)
