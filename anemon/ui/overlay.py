"""A reference session drawn under the one replayed (`anemon replay SOURCE --overlay OTHER`).

Each arm of OTHER is matched to an arm of SOURCE (same name, else same `compute` from its
START) and placed by arm elapsed time: round r of the OTHER arm starts where round r of the
SOURCE arm starts (its first trial, warm-up included), so the curves of the same arm line up
however long the sessions' cooldowns were. Plain numpy over Sessions.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from anemon.analysis.summary import ArmSummary, EnergyReadings, summarize
from anemon.store import ArmSeries, Session
from anemon.ui.series import column, runs, steps


@dataclass(frozen=True, slots=True)
class Overlay:
    """OTHER, read whole: its session, its arms' summaries by name, and what to call it."""

    name: str
    """The OTHER as the operator gave it (its file name in titles and legends)."""
    session: Session
    summaries: Mapping[str, ArmSummary]

    @classmethod
    def of(cls, name: str, session: Session, readings: EnergyReadings | None = None) -> Overlay:
        """`readings`: the session's, read with it (`analysis.load.Loaded`)."""
        return cls(name, session, {s.arm: s for s in summarize(session, readings)})

    @property
    def label(self) -> str:
        """Short: the file name without its folder."""
        return Path(self.name).name or self.name

    def match(self, source: Session) -> dict[str, str]:
        """SOURCE arm name → the OTHER arm drawn as its reference (see `match_arms`)."""
        return match_arms(computes(source), computes(self.session))


def computes(session: Session) -> dict[str, str | None]:
    """Each arm's compute as its START said (None: not said, or no START yet)."""
    return {
        name: arm.start.compute if arm.start is not None else None
        for name, arm in session.arms.items()
    }


def match_arms(source: Mapping[str, str | None], other: Mapping[str, str | None]) -> dict[str, str]:
    """SOURCE arm → OTHER arm: the same name first; then, for the SOURCE arms left, the first
    OTHER arm left with the same known compute (in order of appearance). Each OTHER arm is
    matched at most once, so two GPU arms pair with two GPU arms."""
    pairs = {name: name for name in source if name in other}
    left = [name for name in other if name not in pairs.values()]
    for name, compute in source.items():
        if name in pairs or compute is None:
            continue
        found = next((o for o in left if other[o] == compute), None)
        if found is not None:
            pairs[name] = found
            left.remove(found)
    return pairs


def renamed(overlay: Overlay, source: Session) -> list[ArmSummary]:
    """OTHER's summaries under the names of the SOURCE arms they are matched to (so
    `analysis.compare` pairs them by name); an unmatched OTHER arm keeps its own."""
    names = {o: s for s, o in overlay.match(source).items()}
    return [replace(s, arm=names.get(s.arm, s.arm)) for s in overlay.summaries.values()]


# -- placing the points ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Placed:
    """One launch (round) of an OTHER arm placed on SOURCE's time axis."""

    source_arm: str
    """The SOURCE arm it is the reference of (its colour)."""
    other_arm: str
    begin: float
    end: float
    """OTHER session times of the round's first and last trial."""
    shift: float
    """Added to an OTHER session time: SOURCE seconds since SOURCE's start."""


def first_trials(arm: ArmSeries) -> list[tuple[float, float]]:
    """(first, last) session time of the trials of each launch, in order (where the app ran
    them: `placed_t`)."""
    t, rounds = column(arm.columns["placed_t"]), column(arm.columns["round"])
    return [(float(t[r][0]), float(t[r][-1])) for r in runs(rounds)]


def placements(overlay: Overlay, source: Session) -> Iterator[Placed]:
    """Every OTHER round whose matched SOURCE round has begun (its first trial played)."""
    origin = source.first_t or 0.0
    for mine, theirs in overlay.match(source).items():
        here = first_trials(source.arms[mine])
        there = first_trials(overlay.session.arms[theirs])
        for (start, _), (begin, end) in zip(here, there, strict=False):
            yield Placed(mine, theirs, begin, end, start - origin - begin)


def elapsed(session: Session) -> float:
    return session.last_t - session.first_t if session.first_t is not None else 0.0


def clipped(x: np.ndarray, y: np.ndarray, end: float) -> tuple[np.ndarray, np.ndarray]:
    """The points up to `end` (the SOURCE's elapsed time: the reference never runs ahead of
    the chart's x axis, it unrolls with the replay)."""
    keep = x <= end
    return x[keep], y[keep]


RefPoints = tuple[str, np.ndarray, np.ndarray]
"""The SOURCE arm a reference belongs to, and its x (SOURCE seconds since start) and y."""


def arm_points(overlay: Overlay, source: Session, name: str) -> list[RefPoints]:
    """A per-trial figure (`decode_tps`, `prompt_tps`) of each matched OTHER arm, warm-ups
    left out as in the live charts, one entry per placed round."""
    end = elapsed(source)
    out = []
    for p in placements(overlay, source):
        arm = overlay.session.arms[p.other_arm]
        t = column(arm.columns["placed_t"])
        keep = (column(arm.columns["warmup"]) == 0) & (t >= p.begin) & (t <= p.end)
        x, y = clipped(t[keep] + p.shift, column(arm.columns[name])[keep], end)
        if len(x):
            out.append((p.source_arm, x, y.copy()))
    return out


def decode_mean(overlay: Overlay, source: Session, arm: str) -> float | None:
    """The mean decode rate of `arm`'s reference over the same arm elapsed time as the
    replay has reached (its placed, warm-up-free trials): mid-arm, a burst is compared with
    the reference's burst, not with its whole sustained run. None: no trial placed yet."""
    ys = [y for mine, _, y in arm_points(overlay, source, "decode_tps") if mine == arm]
    values = np.concatenate(ys) if ys else np.empty(0)
    values = values[~np.isnan(values)]
    return float(values.mean()) if len(values) else None


def series_points(overlay: Overlay, source: Session, attr: str, step: bool) -> list[RefPoints]:
    """A session series of OTHER (`thermal`, `power_w`) during each placed round: what it
    read while that arm ran, on the SOURCE arm's time. `step`: drawn as a step line that
    holds its last value to the round's last trial."""
    series = getattr(overlay.session, attr)
    t, v = column(series.t), column(series.value)
    end = elapsed(source)
    out = []
    for p in placements(overlay, source):
        keep = (t >= p.begin) & (t <= p.end)
        x, y = clipped(t[keep] + p.shift, v[keep], end)
        if step:
            x, y = steps(x, y, end=min(p.end + p.shift, end))
        if len(x):
            out.append((p.source_arm, x, y.copy()))
    return out
