"""`anemon compare`: arms side by side across sessions (docs/spec/cli.md "v2: compare").

Each arm (or each compute, `by="compute"`) gets its per-arm summary in every session, the
change of every numeric figure against the first session (`delta_pct`), and, when three or
more sessions have it, the median of each figure with a 95 % percentile bootstrap interval:
BOOTSTRAP_RESAMPLES resamples of the median, numpy's `default_rng(BOOTSTRAP_SEED)`, so the
same sessions always give the same interval.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import PurePath
from typing import Literal

import numpy as np
from rich.table import Table

from anemon.analysis.render import (
    LinesTable,
    fit_columns,
    fit_table,
    fmt,
    given_notes,
    has_process,
    j_per_token,
    mem_peak,
    per_round,
    serious_share,
    thermal_cell,
)
from anemon.analysis.render import title as markdown_title
from anemon.analysis.summary import ArmSummary
from anemon.analysis.sustained import burst_to_sustained, retained_cell
from anemon.store import Session
from anemon.text import printable

By = Literal["arm", "compute"]
BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 20_261_111
"""The seed of the bootstrap's generator (documented in the README): fixed, so an interval
is the same every time it is computed."""
MIN_SESSIONS = 3
"""Sessions (with a value) an arm needs for its median and interval."""
NUMERIC_KEYS = tuple(f.name for f in fields(ArmSummary) if f.type in ("int", "float | None"))
"""The summary's figures (thermal states are names, rounds a list: neither is numeric)."""
SOURCED_KEYS = ("power_w_mean", "energy_j", "j_per_token")
"""The figures whose source (`energy_source`) matters: sessions of the battery's and of the
phone's system load give no delta, median or interval of them together (one number from two
sources)."""
NO_COMPUTE = "unknown"
"""The group of an arm whose START did not say its compute (`by="compute"`)."""


@dataclass(frozen=True, slots=True)
class SourceArms:
    """One SOURCE's arms, each with the compute its START named."""

    source: str
    summaries: tuple[ArmSummary, ...]
    computes: Mapping[str, str | None]
    title: str = ""
    """Its Markdown title, as `summary`'s (`render.title`); "": the source alone."""

    @classmethod
    def of(
        cls,
        source: str,
        session: Session,
        summaries: Iterable[ArmSummary],
        device: str | None = None,
    ) -> SourceArms:
        """`device`: the recording's backend, which the title names."""
        computes = {
            name: arm.start.compute if arm.start is not None else None
            for name, arm in session.arms.items()
        }
        return cls(source, tuple(summaries), computes, markdown_title(source, session, device))


@dataclass(frozen=True, slots=True)
class ArmComparison:
    """One arm (or compute) across the sessions: None where a session does not have it."""

    arm: str
    sessions: tuple[ArmSummary | None, ...]
    delta_pct: Mapping[str, tuple[float | None, ...]]
    median: Mapping[str, float | None] | None
    """None when fewer than MIN_SESSIONS sessions have the arm."""
    ci95: Mapping[str, tuple[float, float] | None] | None

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {
            "arm": self.arm,
            "sessions": [None if s is None else s.to_json() for s in self.sessions],
            "delta_pct": {key: list(values) for key, values in self.delta_pct.items()},
        }
        if self.median is not None and self.ci95 is not None:
            data["median"] = dict(self.median)
            data["ci95"] = {k: None if v is None else list(v) for k, v in self.ci95.items()}
        return data


@dataclass(frozen=True, slots=True)
class Comparison:
    sources: tuple[str, ...]
    by: By
    arms: tuple[ArmComparison, ...]
    titles: tuple[str, ...] = ()
    """Each source's Markdown title (`SourceArms.title`), for the Markdown's own."""

    def to_json(self) -> dict[str, object]:
        return {
            "sources": list(self.sources),
            "by": self.by,
            "arms": [arm.to_json() for arm in self.arms],
        }


def compare(sources: Sequence[SourceArms], by: By = "arm") -> Comparison:
    """The arms of every source, matched by name or by compute, in order of first appearance."""
    grouped = [_groups(source, by) for source in sources]
    names = list(dict.fromkeys(name for groups in grouped for name in groups))
    arms = tuple(
        _compare_arm(name, tuple(groups.get(name) for groups in grouped)) for name in names
    )
    titles = tuple(s.title or printable(s.source) for s in sources)
    return Comparison(tuple(s.source for s in sources), by, arms, titles)


def _groups(source: SourceArms, by: By) -> dict[str, ArmSummary]:
    """The source's arms by group name. By compute, a second arm of the same compute in one
    session is its own group ("ane 2"): one session gives one summary per group."""
    if by == "arm":
        return {s.arm: s for s in source.summaries}
    groups: dict[str, ArmSummary] = {}
    for summary in source.summaries:
        compute = source.computes.get(summary.arm) or NO_COMPUTE
        name, n = compute, 1
        while name in groups:
            n += 1
            name = f"{compute} {n}"
        groups[name] = summary
    return groups


def _compare_arm(name: str, sessions: tuple[ArmSummary | None, ...]) -> ArmComparison:
    sources = {s.energy_source for s in sessions if s is not None and s.energy_source}
    values = {key: [_number(s, key) for s in sessions] for key in NUMERIC_KEYS}
    if len(sources) > 1:
        values.update({key: [None] * len(sessions) for key in SOURCED_KEYS})
    delta = {key: delta_list(column) for key, column in values.items()}
    if sum(s is not None for s in sessions) < MIN_SESSIONS:
        return ArmComparison(name, sessions, delta, None, None)
    median: dict[str, float | None] = {}
    ci95: dict[str, tuple[float, float] | None] = {}
    for key, column in values.items():
        present = [x for x in column if x is not None]
        enough = len(present) >= MIN_SESSIONS
        median[key] = float(np.median(present)) if enough else None
        ci95[key] = bootstrap_ci(present) if enough else None
    return ArmComparison(name, sessions, delta, median, ci95)


def delta_pct(first: float | None, value: float | None) -> float | None:
    """100 x (value - first) / first; None where either is None, or first is 0. The first
    session's own entry is None (the spec's `[null, d2, d3...]`)."""
    if first is None or value is None or first == 0:
        return None
    return 100.0 * (value - first) / first


def delta_list(values: Sequence[float | None]) -> tuple[float | None, ...]:
    """`delta_pct` of each value against the first, the first itself None."""
    return (None, *(delta_pct(values[0], v) for v in values[1:])) if values else ()


def bootstrap_ci(values: Sequence[float]) -> tuple[float, float]:
    """The 95 % percentile bootstrap interval of the median of `values`: BOOTSTRAP_RESAMPLES
    resamples with replacement, drawn by `default_rng(BOOTSTRAP_SEED)` (the same values
    always give the same interval), the 2.5th and 97.5th percentiles of their medians."""
    data = np.asarray(values, dtype=float)
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    picks = rng.integers(0, len(data), size=(BOOTSTRAP_RESAMPLES, len(data)))
    medians = np.median(data[picks], axis=1)
    lo, hi = np.percentile(medians, [2.5, 97.5])
    # interpolation may land a rounding error outside the medians (35.27...614 > 35.27...61)
    return float(max(lo, medians.min())), float(min(hi, medians.max()))


def _number(summary: ArmSummary | None, key: str) -> float | None:
    if summary is None:
        return None
    value = getattr(summary, key)
    return None if value is None else float(value)


# -- renderings -----------------------------------------------------------------------------


def to_json(comparison: Comparison) -> str:
    return json.dumps(comparison.to_json(), indent=2) + "\n"


def _group_column(comparison: Comparison) -> str:
    return "compute" if comparison.by == "compute" else "arm"


def table_columns(comparison: Comparison) -> tuple[str, ...]:
    """The key figures, each with its change against the first source (Δ)."""
    arm = ("compute", "arm") if comparison.by == "compute" else ("arm",)
    return (*arm, "source", "decode tok/s", "Δ decode", "burst → sust", "Δ sust", "retained",
            "thermal", "serious share", "J/token", "Δ J/token",
            *(MEMORY if with_memory(comparison) else ()))  # fmt: skip


MEMORY = ("mem peak",)
"""The app's peak footprint (v3), a column only where some session read it."""


def with_memory(comparison: Comparison) -> bool:
    """Some session of some arm has process figures (DVT): the table shows the memory."""
    return any(s is not None and has_process(s) for arm in comparison.arms for s in arm.sessions)


def signed(value: float | None) -> str:
    """A change in percent: "+5.2 %", "−3.1 %" (a true minus), "—" for none."""
    if value is None:
        return "—"
    text = f"{abs(value):,.1f} %"
    return ("−" if value < 0 else "+") + text


def _with_ci(
    m: float | None, ci: tuple[float, float] | None, digits: int, unit: str, scale: float = 1.0
) -> str:
    """A median and its interval, with the figure's unit: "60.7 [54.3, 98.5] %" (`scale`:
    a fraction shown in percent)."""
    if m is None:
        return "—"
    median = fmt(scale * m, digits)
    if ci is None:
        return f"{median} {unit}"
    return f"{median} [{fmt(scale * ci[0], digits)}, {fmt(scale * ci[1], digits)}] {unit}"


def source_labels(sources: Sequence[str]) -> list[str]:
    """Each SOURCE by its last path parts, as few as tell the different ones apart: the
    table and Markdown are read by people (JSON and CSV keep the paths as given)."""
    parts = [PurePath(source).parts or (source,) for source in sources]
    distinct = len(set(sources))
    for n in range(1, max(len(p) for p in parts) + 1):
        labels = [str(PurePath(*p[-n:])) for p in parts]
        if len(set(labels)) == distinct:
            return [printable(label) for label in labels]
    return [printable(source) for source in sources]


def table_rows(comparison: Comparison) -> list[tuple[str, ...]]:
    """One row per (arm, source) that has the arm, then a "median [95 % CI]" row for an
    arm of three or more sessions."""
    labels = source_labels(comparison.sources)
    rows: list[tuple[str, ...]] = []
    by_compute = comparison.by == "compute"
    memory = with_memory(comparison)
    for arm in comparison.arms:
        for i, summary in enumerate(arm.sessions):
            if summary is None:
                continue
            delta = {key: values[i] for key, values in arm.delta_pct.items()}
            names = (arm.arm, summary.arm) if by_compute else (arm.arm,)
            group = tuple(printable(name) for name in names)  # names are data: escaped
            rows.append((
                *group, labels[i],
                per_round(summary, lambda x: fmt(x.decode_mean)), signed(delta["decode_mean"]),
                per_round(summary, lambda x: burst_to_sustained(x.burst_tps, x.sustained_tps)),
                signed(delta["sustained_tps"]),
                per_round(summary, lambda x: retained_cell(x.retained_pct)),
                per_round(summary, thermal_cell), per_round(summary, serious_share),
                j_per_token(summary), signed(delta["j_per_token"]),
                *((mem_peak(summary),) if memory else ()),
            ))  # fmt: skip
        if arm.median is not None and arm.ci95 is not None:
            m, ci = arm.median, arm.ci95
            group = (printable(arm.arm), "") if by_compute else (printable(arm.arm),)
            rows.append((
                *group, "median [95 % CI]",
                _with_ci(m["decode_mean"], ci["decode_mean"], 1, "tok/s"), "",
                burst_to_sustained(m["burst_tps"], m["sustained_tps"]), "",
                _with_ci(m["retained_pct"], ci["retained_pct"], 1, "%"), "",
                _with_ci(m["serious_frac"], ci["serious_frac"], 0, "%", scale=100),
                _with_ci(m["j_per_token"], ci["j_per_token"], 4, "J/token"), "",
                *((_with_ci(m["mem_peak_gb"], ci["mem_peak_gb"], 2, "GB"),) if memory else ()),
            ))  # fmt: skip
    return rows


def _first(comparison: Comparison) -> str:
    """The first SOURCE as given (the table's rows name it by its label)."""
    return printable(comparison.sources[0])


DROP_ORDER = ("Δ J/token", "mem peak", "Δ sust", "serious share", "retained", "Δ decode", "J/token",
              "source", "thermal")  # fmt: skip
"""The columns a narrow terminal loses first, once the sources' labels are as short as they
go (`fitted_sources`): the arm and its decode stay; thermal goes last (a figure without its
thermal state is not comparable, domain.md)."""


SOURCE_LEAST = 16
"""The fewest cells a source's label is elided to (`fitted_sources`) before columns go."""


def elided(label: str, cells: int) -> str:
    """`label` in at most `cells` characters, its middle left out ("…"): a label's head and
    tail are what tell sessions apart (a date's folder, a file's version)."""
    if len(label) <= cells:
        return label
    head = cells // 2
    return f"{label[:head]}…{label[len(label) - (cells - 1 - head) :]}"


def fitted_sources(
    names: Sequence[str], rows: list[tuple[str, ...]], width: int
) -> tuple[list[tuple[str, ...]], bool]:
    """`rows` with their source labels elided in the middle (`elided`) as little as lets
    every column fit `width`, never below SOURCE_LEAST cells nor so far that two labels
    read the same; and whether any was. Long paths cost a figure column before this."""
    at = names.index("source")
    labels = {row[at] for row in rows}
    widest = max(map(len, labels), default=0)

    def shortened(cells: int) -> list[tuple[str, ...]]:
        return [(*row[:at], elided(row[at], cells), *row[at + 1 :]) for row in rows]

    def fits(cells: int) -> bool:
        return fit_columns(names, shortened(cells), width, ())[1] is not None

    def distinct(cells: int) -> bool:
        return len({elided(label, cells) for label in labels}) == len(labels)

    if widest <= SOURCE_LEAST or fits(widest):
        return rows, False
    cells = SOURCE_LEAST  # if even these do not fit, columns go too (`fit_table`)
    if fits(cells):  # the most cells that fit: fits(low), not fits(high)
        low, high = cells, widest
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (middle, high) if fits(middle) else (low, middle)
        cells = low
    while not distinct(cells) and cells < widest:
        cells += 1
    return shortened(cells), cells < widest


def rich_table(comparison: Comparison, width: int) -> LinesTable | Table:
    """The table at `width`: the sources' labels elided in the middle before any column is
    dropped (`fitted_sources`), then the columns of DROP_ORDER, first the first."""
    names = table_columns(comparison)
    rows, shortened = fitted_sources(names, table_rows(comparison), width)
    notes = [f"Δ: change against {_first(comparison)}"] if comparison.sources else []
    if shortened:
        notes.append("source: …, its path elided in the middle to fit (md, csv, json: whole)")
    if any(arm.median is not None for arm in comparison.arms):
        notes.append(
            f"95 % CI: percentile bootstrap of the median, {BOOTSTRAP_RESAMPLES:,} resamples"
        )
    notes += given_notes(s for arm in comparison.arms for s in arm.sessions if s is not None)
    return fit_table(names, rows, width, DROP_ORDER, notes=notes,
                     left=("arm", "compute", "source"))  # fmt: skip


def markdown(comparison: Comparison) -> str:
    """What a lab note pastes: one table under a title naming the sessions compared (each
    as `summary`'s Markdown title names it: source, tag, device, date), rounds written
    "a / b" as the summary does."""

    def row(values: Sequence[str]) -> str:
        return "| " + " | ".join(v.replace("|", "\\|") for v in values) + " |"

    names = table_columns(comparison)
    lines = [f"### {' vs '.join(comparison.titles)}", ""] if comparison.titles else []
    lines += [row(names), "|" + "---|" * len(names)]
    lines += [row(values) for values in table_rows(comparison)]
    if comparison.sources:
        lines += ["", f"Δ: change against {_first(comparison)}."]
    if any(arm.median is not None for arm in comparison.arms):
        lines.append(
            f"95 % CI: percentile bootstrap of the median, {BOOTSTRAP_RESAMPLES:,} resamples."
        )
    lines += given_notes(s for arm in comparison.arms for s in arm.sessions if s is not None)
    return "\n".join(lines) + "\n"


def _csv_row(group: tuple[str, str], source: str, summary: ArmSummary) -> dict[str, object]:
    data = summary.to_json()
    rounds = summary.rounds
    del data["rounds"]
    data["rounds"] = len(rounds)
    data["round_decode_means"] = " / ".join(fmt(r.decode_mean, 2) for r in rounds)
    return {group[0]: group[1], "source": source, **data}


def to_csv(comparison: Comparison) -> str:
    """One row per (arm, source) that has the arm: the group, the source, the summary's keys
    (by compute, `arm` is the arm's own name), and `delta_pct_KEY` for each numeric key."""
    key = _group_column(comparison)
    rows: list[dict[str, object]] = []
    for arm in comparison.arms:
        for i, summary in enumerate(arm.sessions):
            if summary is None:
                continue
            row = _csv_row((key, arm.arm), comparison.sources[i], summary)
            row.update({f"delta_pct_{k}": v[i] for k, v in arm.delta_pct.items()})
            rows.append(row)
    import pandas as pd  # only for CSV: the other formats start without it

    return pd.DataFrame(rows).to_csv(index=False)


FORMATS: Mapping[str, Callable[[Comparison], str]] = {
    "md": markdown,
    "csv": to_csv,
    "json": to_json,
}
"""The text formats (the table is printed by rich, at the console's width)."""
