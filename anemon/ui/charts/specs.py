"""What each chart shows: a `ChartSpec` per chart id (`CHARTS`), the lines it draws from a
Session at full resolution, and the reference curves of an overlay under them."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from itertools import islice
from typing import Any, TypeVar

import numpy as np
from textual.color import Color

from anemon.analysis.growing import Column
from anemon.events import THERMAL_NAMES
from anemon.store import ArmSeries, Series, Session
from anemon.ui import overlay
from anemon.ui.charts.axes import ANY_LEAST, MARGIN, Least
from anemon.ui.overlay import Overlay
from anemon.ui.series import SHOWN_ARMS, column, left_out, left_out_text, owners, runs
from anemon.ui.status import power_state

PALETTE = ("#4fc1ff", "#f28c28", "#b5e853", "#d670d6", "#ffd700", "#ff5f5f", "#00d7af", "#af87ff")
"""One colour per arm, in order of first appearance."""
NO_ARM = "#8a8a8a"
"""Power read while no arm runs (cooldowns, between launches), or an arm the charts leave out."""
EARLIER = "earlier arms"
"""The label of the power read in the spans of the arms the charts leave out."""
THERMAL = "#ff875f"
PAIR = "ab"
"""The side-by-side arm charts (`arm-a`, `arm-b`): the first arm and the second."""
DIM_TOWARDS = Color.parse("#3a3a3a")
DIM_BY = 0.55
"""A reference curve (`--overlay`) is its arm's colour this far towards a dark grey: the same
hue, clearly behind the replayed lines."""


def dimmed(colour: str) -> str:
    return Color.parse(colour).blend(DIM_TOWARDS, DIM_BY).hex


@dataclass(frozen=True, slots=True)
class Line:
    """One dataset of a chart: full-resolution x (seconds since start) and y."""

    x: np.ndarray
    y: np.ndarray
    colour: str
    label: str | None = None
    step: bool = False
    ref: bool = False
    """A reference curve (the overlay): drawn under the others, left out of the text form."""
    breaks: np.ndarray | None = None
    """The x where another launch's points begin (ascending): the line is not drawn across
    the time between two launches (a cooldown, the other arm's round)."""


@dataclass(frozen=True, slots=True)
class ChartSpec:
    """What a chart shows: its title and lines, and fixed y limits when it has them."""

    title: Callable[[Session], str]
    lines: Callable[[Session], list[Line]]
    ylimits: Callable[[Session], tuple[float | None, float | None]] = lambda s: (None, None)
    legend: bool = False
    thermal_axis: bool = False
    xmax: Callable[[Session], float] = lambda s: elapsed(s)
    """The x axis runs from 0 to this (session seconds, or seconds since an arm's launch)."""
    data: Callable[[Session], object] = lambda s: s.version
    """A cheap signature of what the lines show: it changes with every point they draw, and
    with nothing else, so a reading redraws the charts that show it alone (a process reading
    the memory and GPU charts, a power reading power, battery and free disk, not decode).
    While it (and the chart's size) stays the same, the chart is redrawn only when the x
    axis's end moves (`axis_end`'s steps)."""
    value: Callable[[float], str] = lambda v: f"{v:,.1f}"
    """A value in words, for the text form of a chart too short to plot (`Chart.min_rows`)."""
    reference: Callable[[Overlay, Session], list[Line]] | None = None
    """The overlay's curves for this chart (`anemon replay --overlay`); None: it has none."""
    empty: str = "no data yet"
    """What the text form says while there is no reading."""
    unit: str = ""
    """The values' unit, drawn above the value axis ("": none, the thermal chart's states)."""
    least: Least = ANY_LEAST
    """The least span of its value axis when autoscaled."""


def elapsed(session: Session) -> float:
    return session.last_t - session.first_t if session.first_t is not None else 0.0


def _since_start(session: Session, t: np.ndarray) -> np.ndarray:
    return t - (session.first_t or 0.0)


def arm_colour(session: Session, name: str) -> str:
    return PALETTE[session.arms[name].index % len(PALETTE)]


KEPT_LINES = 256
"""Lines an `ArmLines` or a `SessionLine` keeps between draws (a chart draws at most
SHOWN_ARMS arms; the runs shown share it)."""
V = TypeVar("V")


def kept_for(kept: dict[int, tuple[Any, V]], owner: object, make: Callable[[], V]) -> V:
    """What `kept` holds for `owner` (an arm, a series), else `make()`'s, kept: by identity,
    the owner held with it so that its id is not another's; the oldest let go past
    KEPT_LINES."""
    found = kept.get(id(owner))
    if found is not None and found[0] is owner:
        return found[1]
    made = make()
    kept[id(owner)] = (owner, made)
    if len(kept) > KEPT_LINES:
        del kept[next(iter(kept))]
    return made


class ArmLines:
    """A chart's line of column `name` for each of the latest SHOWN_ARMS arms (warm-ups left
    out, as in the summary), kept as its trials come (`GrowingArmLine`): a draw costs the new
    trials, not all of them. Built afresh from the columns at each draw, the lines of a replay
    at `max` (250,000 trials an arm) were ~40 % of the charts' draws, up to ~15 ms each. One per
    column, shared by the charts of every run shown, kept by the arm (`kept_for`)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._kept: dict[int, tuple[ArmSeries, GrowingArmLine]] = {}

    def __call__(self, session: Session) -> list[Line]:
        return [self.line(session, arm) for arm in session.recent_arms(SHOWN_ARMS) if len(arm)]

    def __len__(self) -> int:
        """How many arms' lines it keeps."""
        return len(self._kept)

    def line(self, session: Session, arm: ArmSeries) -> Line:
        grown = kept_for(self._kept, arm, lambda: GrowingArmLine(arm, self.name))
        grown.update(session)
        return Line(grown.x.view, grown.y.view, arm_colour(session, arm.name), arm.name,
                    breaks=grown.breaks.view)  # fmt: skip


class GrowingArmLine:
    """An arm's timed trials of one column against their placed time since the session's
    start, and where each launch after the first begins: what its columns give at once, each
    `update` reading only the trials added since (an arm's columns only grow)."""

    def __init__(self, arm: ArmSeries, name: str) -> None:
        self.arm, self.name = arm, name
        self.read = 0
        """The arm's trials read so far (warm-ups too)."""
        self.x, self.y, self.breaks = Column(), Column(), Column()
        self._round = math.nan
        """The launch of the last timed trial read (NaN: none yet)."""

    def update(self, session: Session) -> None:
        """Read the trials added since; `session` the arm's (its start set by its first event,
        before any arm's, never changed after)."""
        columns, read, now = self.arm.columns, self.read, len(self.arm)
        if now == read:
            return
        timed = column(columns["warmup"])[read:now] == 0
        x = _since_start(session, column(columns["placed_t"])[read:now][timed])
        launch = column(columns["round"])[read:now][timed]
        began = launch != np.r_[self._round, launch[:-1]]
        if len(began) and len(self.x) == 0:
            began[0] = False  # the first launch's start is no break
        self.breaks.extend(x[began])
        self.x.extend(x)
        self.y.extend(column(columns[self.name])[read:now][timed])
        self._round = float(launch[-1]) if len(launch) else self._round
        self.read = now


def trials(session: Session) -> tuple[int, ...]:
    """The `data` signature of the per-arm charts: how many arms, and how many trials each
    arm they draw has."""
    return len(session.arms), *(len(arm) for arm in session.recent_arms(SHOWN_ARMS))


def per_arm_title(title: str) -> Callable[[Session], str]:
    """`title`, and how many arms the chart leaves out, if any."""
    return lambda s: " · ".join(filter(None, (title, left_out_text(left_out(s)))))


def nth_arm(index: int) -> Callable[[Session], list[Line]]:
    """Decode of the index-th arm over its own time since launch, so two arms line up: a line
    per launch, each from its own start."""

    def lines(session: Session) -> list[Line]:
        arms = list(session.arms.values())
        if index >= len(arms):
            return []
        arm = arms[index]
        timed = column(arm.columns["warmup"]) == 0
        x = column(arm.columns["app_t"])[timed]
        y = column(arm.columns["decode_tps"])[timed]
        colour = arm_colour(session, arm.name)
        return [Line(x[r], y[r], colour) for r in runs(column(arm.columns["round"])[timed])]

    return lines


def pair(session: Session) -> list[ArmSeries]:
    """The first two arms: those the side-by-side arm charts draw."""
    return list(islice(session.arms.values(), len(PAIR)))


def longest_arm(session: Session) -> float:
    ends = [np.nanmax(column(a.columns["app_t"])) for a in pair(session) if len(a)]
    ends = [e for e in ends if not np.isnan(e)]
    return float(max(ends)) if ends else 0.0


def nth_arm_title(index: int) -> Callable[[Session], str]:
    def title(session: Session) -> str:
        arms = list(session.arms)
        return f"decode tok/s · {arms[index]}" if index < len(arms) else "decode tok/s · —"

    return title


def decode_limits(session: Session) -> tuple[float | None, float | None]:
    """Shared by the side-by-side arm charts, so heights compare."""
    tops = [np.nanmax(column(a.columns["decode_tps"])) for a in pair(session) if len(a)]
    tops = [t for t in tops if not np.isnan(t)]
    return (0.0, float(max(tops)) * 1.05) if tops else (None, None)


class SessionLine:
    """The session's series `attr` (thermal, battery, free disk: a value a trial) against time
    since the start, its times shifted as they come (a draw costs the new ones, not a copy of
    all: at 500,000 trials ~4 MB a draw). Kept by the series (held, as `ArmLines` holds its
    arms, `kept_for`), for the sessions of the runs shown."""

    def __init__(self, attr: str, colour: str, step: bool = False) -> None:
        self.attr, self.colour, self.step = attr, colour, step
        self._kept: dict[int, tuple[Series, Column]] = {}

    def __call__(self, session: Session) -> list[Line]:
        series = getattr(session, self.attr)
        shifted, now = kept_for(self._kept, series, Column), len(series.t)
        if now > len(shifted):
            shifted.extend(_since_start(session, column(series.t)[len(shifted) : now]))
        x = shifted.view
        return [Line(x, column(series.value), self.colour, step=self.step)] if len(x) else []


def readings(attr: str) -> Callable[[Session], object]:
    """The `data` signature of a session series' chart: how many readings it has (the same
    value again extends the line: drawn with the round that brings it, not a step later)."""
    return lambda s: len(getattr(s, attr).t)


def battery_title(session: Session) -> str:
    return f"battery % ({session.battery_state or 'state unknown'})"


def arm_spans(session: Session) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """When each arm the charts draw ran (the latest SHOWN_ARMS): (starts ascending, ends, arm
    names), one span per launch, from its
    first trial to its last. The latest launch starts at its START (loading is the arm's too)
    and, while it is the current arm's and no END has come, stays open (its last readings
    come before its next trial)."""
    spans: list[tuple[float, float, str]] = []
    for arm in session.recent_arms(SHOWN_ARMS):
        t, rounds = column(arm.columns["placed_t"]), column(arm.columns["round"])
        mine = [(float(t[r].min()), float(t[r].max()), arm.name) for r in runs(rounds)]
        if arm.start is not None:
            begin = arm.start.t
            traced = bool(len(rounds)) and rounds[-1] == arm.rounds  # its trials have come
            first, last, _ = mine.pop() if traced else (begin, begin, arm.name)
            running = arm.name == session.current_arm and (arm.end is None or arm.end.t < begin)
            mine.append((min(begin, first), math.inf if running else last, arm.name))
        spans.extend(mine)
    spans.sort(key=lambda span: span[0])
    starts = np.array([s[0] for s in spans], dtype=float)
    return starts, np.array([s[1] for s in spans], dtype=float), [s[2] for s in spans]


def power_lines(session: Session) -> list[Line]:
    """Host power readings, coloured by the arm whose span (`arm_spans`) they fall in, grey
    outside every span ("earlier arms" before the first, when the charts leave arms out);
    each stretch starts at the previous one's last reading, so the line runs on unbroken as
    the colour changes."""
    series = session.power_w
    if not len(series.t):
        return []
    t, watts = column(series.t), column(series.value).copy()  # the lines outlive the view
    starts, ends, names = arm_spans(session)
    owner = owners(t, starts, ends)
    x = _since_start(session, t)
    earlier = starts[0] if left_out(session) and len(starts) else -math.inf
    lines = []
    for part in runs(owner):
        joined = slice(max(part.start - 1, 0), part.stop)
        k = int(owner[part.start])
        if k < 0:
            label = EARLIER if t[part.start] < earlier else "no arm"
            lines.append(Line(x[joined], watts[joined], NO_ARM, label))
        else:
            lines.append(Line(x[joined], watts[joined], arm_colour(session, names[k]), names[k]))
    return lines


def power_data(session: Session) -> object:
    """The readings, and what colours them (the arms' spans, which arm runs)."""
    ends = tuple((a.rounds, a.end.t if a.end else None) for a in session.recent_arms(SHOWN_ARMS))
    return len(session.power_w.t), trials(session), ends, session.current_arm


def power_limits(session: Session) -> tuple[float | None, float | None]:
    """From 0 W (the idle phone is always on the chart anyway), with room above the peak."""
    watts = column(session.power_w.value)
    top = float(np.max(watts)) if len(watts) else 0.0
    return (0.0, top * (1 + MARGIN)) if top > 0 else (None, None)


def power_title(session: Session) -> str:
    if not len(session.power_w.t):
        return "power W (no readings)"
    state = power_state(session)
    if state == "charging":
        return "power W (charging: not the load)"
    return "power W" if state == "—" else f"power W ({state})"


NO_PROCESS = "n/a: no process readings"
"""A process chart with no reading: a backend without DVT (devicectl, the simulator), an
older recording."""


def process_lines(field: str, label: Callable[[ArmSeries], str] = lambda a: a.name,
                  ) -> Callable[[Session], list[Line]]:  # fmt: skip
    """One line per arm of the app's readings (`ArmSeries.process`: what came, never a point
    made up between), cut where the arm's next launch begins."""

    def lines(session: Session) -> list[Line]:
        out = []
        for arm in session.recent_arms(SHOWN_ARMS):
            series = arm.process[field]
            if len(series.t):
                x = _since_start(session, column(series.t))
                breaks = _since_start(session, np.array(arm.began[1:], dtype=float))
                y = column(series.value).copy()  # the lines outlive the view
                out.append(Line(x, y, arm_colour(session, arm.name), label(arm), breaks=breaks))
        return out

    return lines


def process_data(field: str) -> Callable[[Session], object]:
    """The `data` signature of a process chart: how many readings each arm it draws has."""
    return lambda s: tuple(len(a.process[field].t) for a in s.recent_arms(SHOWN_ARMS))


def process_title(title: str, field: str) -> Callable[[Session], str]:
    """`title`, "n/a" while no reading came (a backend without DVT, an older recording)."""

    def text(session: Session) -> str:
        read = any(len(a.process[field].t) for a in session.recent_arms(SHOWN_ARMS))
        return per_arm_title(title)(session) if read else f"{title} ({NO_PROCESS})"

    return text


def bought(arm: ArmSeries) -> str:
    """An arm in the memory chart's legend, with the decode its footprint buys: "a 33.0 tok/s"."""
    decode = column(arm.columns["decode_tps"])[column(arm.columns["warmup"]) == 0]
    decode = decode[~np.isnan(decode)]
    return f"{arm.name} {decode.mean():.1f} tok/s" if len(decode) else arm.name


def from_zero(field: str) -> Callable[[Session], tuple[float | None, float | None]]:
    """From 0 (a footprint's size is read against nothing), with room above the peak."""

    def limits(session: Session) -> tuple[float | None, float | None]:
        arms = session.recent_arms(SHOWN_ARMS)
        values = [a.process[field].value for a in arms]
        tops = [float(np.max(column(v))) for v in values if len(v)]
        top = max(tops, default=0.0)
        return (0.0, top * (1 + MARGIN)) if top > 0 else (None, None)

    return limits


REF = "ref "
"""What a reference curve's label starts with ("ref ARM")."""


def ref_lines(points: list[overlay.RefPoints], session: Session, colour: str | None = None,
              ) -> list[Line]:  # fmt: skip
    """The overlay's points as dimmed lines in their SOURCE arm's colour (or `colour`), each
    arm labelled once ("ref ARM") however many rounds it has."""
    lines, named = [], set()
    for arm, x, y in points:
        label = None if arm in named else f"{REF}{arm}"
        named.add(arm)
        hue = colour or arm_colour(session, arm)
        lines.append(Line(x, y, dimmed(hue), label, ref=True))
    return lines


def ref_arm(name: str) -> Callable[[Overlay, Session], list[Line]]:
    """The matched OTHER arms' trials of a per-trial figure, on their SOURCE arm's time."""
    return lambda o, s: ref_lines(overlay.arm_points(o, s, name), s)


def ref_series(attr: str, step: bool = False, colour: str | None = None,
               ) -> Callable[[Overlay, Session], list[Line]]:  # fmt: skip
    """A session series of OTHER during its matched arms' rounds (already stepped)."""
    return lambda o, s: ref_lines(overlay.series_points(o, s, attr, step), s, colour)


def ref_nth_arm(index: int) -> Callable[[Overlay, Session], list[Line]]:
    """The index-th SOURCE arm's reference over its own time since launch (`nth_arm`), up to
    the replayed arm's latest trial."""

    def lines(reference: Overlay, session: Session) -> list[Line]:
        arms = list(session.arms)
        theirs = reference.match(session).get(arms[index]) if index < len(arms) else None
        if theirs is None:
            return []
        arm = reference.session.arms[theirs]
        timed = column(arm.columns["warmup"]) == 0
        x, y = column(arm.columns["app_t"])[timed], column(arm.columns["decode_tps"])[timed]
        x, y = overlay.clipped(x, y, longest_arm(session))
        return ref_lines([(arms[index], x, y)], session) if len(x) else []

    return lines


def nth_arm_chart(index: int) -> ChartSpec:
    """The index-th arm's decode over its own time since launch (the `ab` layout's pair), on
    the y scale the pair shares."""
    return ChartSpec(
        nth_arm_title(index),
        nth_arm(index),
        decode_limits,
        xmax=longest_arm,
        data=trials,
        reference=ref_nth_arm(index),
        unit="tok/s",
    )


TPS_LEAST = Least(share=0.2)
"""A tok/s axis spans ±10 % of the median at least: a 3 % dip reads as one."""


CHARTS: dict[str, ChartSpec] = {
    "decode": ChartSpec(
        per_arm_title("decode tok/s"),
        ArmLines("decode_tps"),
        legend=True,
        data=trials,
        reference=ref_arm("decode_tps"),
        unit="tok/s",
        least=TPS_LEAST,
    ),
    "power": ChartSpec(
        power_title,
        power_lines,
        power_limits,
        data=power_data,
        value=lambda v: f"{v:.2f} W",
        reference=ref_series("power_w"),
        unit="W",
    ),
    "prefill": ChartSpec(
        per_arm_title("prefill tok/s"),
        ArmLines("prompt_tps"),
        legend=True,
        data=trials,
        value=lambda v: f"{v:,.0f}",
        reference=ref_arm("prompt_tps"),
        unit="tok/s",
        least=TPS_LEAST,
    ),
    "thermal": ChartSpec(
        lambda s: "thermal state",
        SessionLine("thermal", THERMAL, step=True),
        ylimits=lambda s: (-0.1, 3.1),
        thermal_axis=True,
        data=readings("thermal"),
        value=lambda v: THERMAL_NAMES[int(v)],
        reference=ref_series("thermal", step=True, colour=THERMAL),
    ),
    "battery": ChartSpec(
        battery_title,
        SessionLine("battery", "#87d787"),
        lambda s: (0, 100),
        data=lambda s: (readings("battery")(s), s.battery_state),
        value=lambda v: f"{v:.0f} %",
        unit="%",
    ),
    "free": ChartSpec(
        lambda s: "free disk GB",
        SessionLine("free_gb", "#87afff"),
        data=readings("free_gb"),
        value=lambda v: f"{v:,.1f} GB",
        unit="GB",
    ),
    "memory": ChartSpec(
        process_title("app memory GB", "mem_gb"),
        process_lines("mem_gb", bought),
        from_zero("mem_gb"),
        legend=True,
        data=lambda s: (process_data("mem_gb")(s), trials(s)),
        value=lambda v: f"{v:.2f} GB",
        empty=NO_PROCESS,
    ),
    "gpu": ChartSpec(
        process_title("GPU %", "gpu_pct"),
        process_lines("gpu_pct"),
        lambda s: (0, 100),
        data=process_data("gpu_pct"),
        value=lambda v: f"{v:.0f} %",
        empty=NO_PROCESS,
    ),
    **{f"arm-{letter}": nth_arm_chart(index) for index, letter in enumerate(PAIR)},
}
"""Chart id → what it shows; the layouts place them by id."""
