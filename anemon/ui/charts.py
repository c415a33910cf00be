"""Charts: textual-plot for the large ones, Sparklines for strips.

Every chart is a `ChartSpec` (which lines to draw from a Session) drawn by one `Chart` widget;
the full series stay in the Session and each draw hands the widget ≤2 points per column.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np
from rich.text import Text
from textual.app import ComposeResult, RenderResult
from textual.color import Color
from textual.containers import Horizontal, Vertical
from textual.geometry import Region, Size
from textual.widgets import Label, Sparkline, Static
from textual_hires_canvas import Canvas
from textual_hires_canvas.hires import pixels as hires_pixels
from textual_plot import HiResMode, LegendLocation, PlotWidget
from textual_plot.axis_formatter import AxisFormatter, NumericAxisFormatter
from textual_plot.plot_widget import FloatScalar, LinePlot

from anemon.events import THERMAL_NAMES
from anemon.store import ArmSeries, Session
from anemon.ui import overlay
from anemon.ui.overlay import Overlay
from anemon.ui.series import Follower, column, decimate, owners, runs, steps
from anemon.ui.status import power_state

PALETTE = ("#4fc1ff", "#f28c28", "#b5e853", "#d670d6", "#ffd700", "#ff5f5f", "#00d7af", "#af87ff")
"""One colour per arm, in order of first appearance."""
NO_ARM = "#8a8a8a"
"""Power read while no arm runs (cooldowns, between launches)."""
THERMAL = "#ff875f"
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
    """A cheap signature of what the lines show. While it (and the chart's size) stays the
    same, the chart is redrawn only once its x axis has grown by a column: host readings come
    every second, and a reading that only extends a line (the same value again; a power
    reading between two trials) can wait that long, as the axis does."""
    value: Callable[[float], str] = lambda v: f"{v:,.1f}"
    """A value in words, for the text form of a chart too short to plot (`Chart.min_rows`)."""
    reference: Callable[[Overlay, Session], list[Line]] | None = None
    """The overlay's curves for this chart (`anemon replay --overlay`); None: it has none."""


def elapsed(session: Session) -> float:
    return session.last_t - session.first_t if session.first_t is not None else 0.0


def _since_start(session: Session, t: np.ndarray) -> np.ndarray:
    return t - (session.first_t or 0.0)


def arm_colour(session: Session, name: str) -> str:
    return PALETTE[list(session.arms).index(name) % len(PALETTE)]


def _arm_line(session: Session, arm: ArmSeries, name: str) -> Line:
    timed = column(arm.columns["warmup"]) == 0
    x = _since_start(session, column(arm.columns["t"])[timed])
    return Line(x, column(arm.columns[name])[timed], arm_colour(session, arm.name), arm.name)


def trials(session: Session) -> tuple[int, ...]:
    """The `data` signature of the per-arm charts: how many trials each arm has."""
    return tuple(len(arm) for arm in session.arms.values())


def per_arm(name: str) -> Callable[[Session], list[Line]]:
    """One line per arm (warm-ups left out, as in the summary)."""
    return lambda s: [_arm_line(s, arm, name) for arm in s.arms.values() if len(arm)]


def nth_arm(index: int) -> Callable[[Session], list[Line]]:
    """Decode of the index-th arm over its own time since launch, so two arms line up."""

    def lines(session: Session) -> list[Line]:
        arms = list(session.arms.values())
        if index >= len(arms):
            return []
        arm = arms[index]
        timed = column(arm.columns["warmup"]) == 0
        x = column(arm.columns["app_t"])[timed]
        y = column(arm.columns["decode_tps"])[timed]
        return [Line(x, y, arm_colour(session, arm.name))]

    return lines


def longest_arm(session: Session) -> float:
    ends = [np.nanmax(column(a.columns["app_t"])) for a in session.arms.values() if len(a)]
    ends = [e for e in ends if not np.isnan(e)]
    return float(max(ends)) if ends else 0.0


def nth_arm_title(index: int) -> Callable[[Session], str]:
    def title(session: Session) -> str:
        arms = list(session.arms)
        return f"decode tok/s · {arms[index]}" if index < len(arms) else "decode tok/s · —"

    return title


def decode_limits(session: Session) -> tuple[float | None, float | None]:
    """Shared by the side-by-side arm charts, so heights compare."""
    tops = [np.nanmax(column(a.columns["decode_tps"])) for a in session.arms.values() if len(a)]
    tops = [t for t in tops if not np.isnan(t)]
    return (0.0, float(max(tops)) * 1.05) if tops else (None, None)


def session_line(attr: str, colour: str, step: bool = False) -> Callable[[Session], list[Line]]:
    def lines(session: Session) -> list[Line]:
        series = getattr(session, attr)
        t = _since_start(session, column(series.t))
        return [Line(t, column(series.value), colour, step=step)] if len(t) else []

    return lines


def latest(attr: str) -> Callable[[Session], object]:
    """The `data` signature of a session series' chart: its newest value (a reading with the
    same value again only extends the line)."""
    return lambda s: getattr(s, attr).last()


def battery_title(session: Session) -> str:
    return f"battery % ({session.battery_state or 'state unknown'})"


def arm_spans(session: Session) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """When each arm ran: (starts ascending, ends, arm names), one span per launch, from its
    first trial to its last. The latest launch starts at its START (loading is the arm's too)
    and, while it is the current arm's and no END has come, stays open (its last readings
    come before its next trial)."""
    spans: list[tuple[float, float, str]] = []
    for arm in session.arms.values():
        t, rounds = column(arm.columns["t"]), column(arm.columns["round"])
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
    outside every span; each stretch starts at the previous one's last reading, so the line
    runs on unbroken as the colour changes."""
    series = session.power_w
    if not len(series.t):
        return []
    t, watts = column(series.t), column(series.value).copy()  # the lines outlive the view
    starts, ends, names = arm_spans(session)
    owner = owners(t, starts, ends)
    x = _since_start(session, t)
    lines = []
    for part in runs(owner):
        joined = slice(max(part.start - 1, 0), part.stop)
        k = int(owner[part.start])
        if k < 0:
            lines.append(Line(x[joined], watts[joined], NO_ARM, "no arm"))
        else:
            lines.append(Line(x[joined], watts[joined], arm_colour(session, names[k]), names[k]))
    return lines


def power_data(session: Session) -> object:
    """What colours the readings (the arms' spans, which arm runs): a reading a second is
    drawn with the next trial, or once the x axis has grown by a column."""
    ends = tuple((a.rounds, a.end.t if a.end else None) for a in session.arms.values())
    return bool(session.power_w.t), trials(session), ends, session.current_arm


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


REF = "ref "
"""What a reference curve's label starts with ("ref ARM")."""
REF_STYLE = dimmed("#d0d0d0")
"""The stroke of the one "ref" entry of a legend too narrow to name each reference."""


def legend_line(entries: Sequence[tuple[str, str]]) -> Text:
    """(label, style) entries on one line, each name after a stroke of its line's style."""
    return Text("  ").join(Text.assemble(("━ ", style), label) for label, style in entries)


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


CHARTS: dict[str, ChartSpec] = {
    "decode": ChartSpec(
        lambda s: "decode tok/s",
        per_arm("decode_tps"),
        legend=True,
        data=trials,
        reference=ref_arm("decode_tps"),
    ),
    "power": ChartSpec(
        power_title,
        power_lines,
        power_limits,
        data=power_data,
        value=lambda v: f"{v:.2f} W",
        reference=ref_series("power_w"),
    ),
    "prefill": ChartSpec(
        lambda s: "prefill tok/s",
        per_arm("prompt_tps"),
        legend=True,
        data=trials,
        value=lambda v: f"{v:,.0f}",
        reference=ref_arm("prompt_tps"),
    ),
    "thermal": ChartSpec(
        lambda s: "thermal state",
        session_line("thermal", THERMAL, step=True),
        ylimits=lambda s: (-0.1, 3.1),
        thermal_axis=True,
        data=latest("thermal"),
        value=lambda v: THERMAL_NAMES[int(v)],
        reference=ref_series("thermal", step=True, colour=THERMAL),
    ),
    "battery": ChartSpec(
        battery_title,
        session_line("battery", "#87d787"),
        lambda s: (0, 100),
        data=lambda s: (s.battery.last(), s.battery_state),
        value=lambda v: f"{v:.0f} %",
    ),
    "free": ChartSpec(
        lambda s: "free disk GB",
        session_line("free_gb", "#87afff"),
        data=latest("free_gb"),
        value=lambda v: f"{v:,.1f} GB",
    ),
    "arm-a": ChartSpec(
        nth_arm_title(0),
        nth_arm(0),
        decode_limits,
        xmax=longest_arm,
        data=trials,
        reference=ref_nth_arm(0),
    ),
    "arm-b": ChartSpec(
        nth_arm_title(1),
        nth_arm(1),
        decode_limits,
        xmax=longest_arm,
        data=trials,
        reference=ref_nth_arm(1),
    ),
}
"""Chart id → what it shows; the layouts place them by id."""


class ElapsedFormatter(AxisFormatter):
    """Session time on the x axis: as many ticks as fit (`fit`), labelled 30s, 2m, 1h."""

    STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 28800)

    def __init__(self) -> None:
        self.fit = 5

    def get_ticks(self, min_: float, max_: float, max_ticks: int = 8) -> list[float]:
        span = max(max_ - min_, 1e-9)
        step = next((s for s in self.STEPS if span / s <= self.fit), None)
        if step is None:  # past 8 h a step: 1, 2, 5 × 10^k hours, so it still fits
            hours = span / self.fit / 3600
            scale = 10 ** math.floor(math.log10(hours))
            step = 3600 * scale * next(m for m in (1, 2, 5, 10) if m * scale >= hours)
        first = math.ceil(min_ / step) * step
        return [float(first + i * step) for i in range(int((max_ - first) // step) + 1)]

    def get_labels_for_ticks(self, ticks: Sequence[float]) -> list[str]:
        if len(ticks) > 1 and ticks[1] - ticks[0] >= 3600:
            return [f"{t / 3600:g}h" for t in ticks]
        if len(ticks) > 1 and ticks[1] - ticks[0] >= 60:
            return [f"{t / 60:g}m" for t in ticks]
        return [f"{t:g}s" for t in ticks]


class ThermalFormatter(AxisFormatter):
    """The y axis of the thermal chart: the four state names."""

    def get_ticks(self, min_: float, max_: float, max_ticks: int = 8) -> list[float]:
        return [float(v) for v in range(len(THERMAL_NAMES)) if min_ <= v <= max_]

    def get_labels_for_ticks(self, ticks: Sequence[float]) -> list[str]:
        return [THERMAL_NAMES[int(t)] for t in ticks]


class FittedFormatter(NumericAxisFormatter):
    """A numeric y axis with no more ticks than its `rows` can hold a row apart (every k-th
    of the nice ticks in range), so no two labels share, and overwrite, a row."""

    def __init__(self) -> None:
        self.rows = 8

    def get_ticks(self, min_: float, max_: float, max_ticks: int = 8) -> list[float]:
        ticks = [t for t in super().get_ticks(min_, max_, max_ticks) if min_ <= t <= max_]
        room = max(1, (self.rows + 1) // 2)
        return ticks[:: math.ceil(len(ticks) / room)] if ticks else ticks


MIN_ROWS = 3
"""Rows inside the axes a numeric chart needs: two ticks (`FittedFormatter`) on rows of their
own, so a reader can tell the scale. Fewer, and the chart shows its latest values as text."""


Latest = tuple[str, str | None, str]
"""The text form's entry for one line: its colour, its label (None: unlabelled), its value."""


def latest_values(lines: Sequence[Line], value: Callable[[float], str]) -> list[Latest]:
    """The newest finite value of each label (each arm; an unlabelled line alone): what a
    chart too short to plot says instead."""
    newest: dict[str | None, tuple[float, float, str]] = {}
    for line in lines:
        keep = ~(np.isnan(line.x) | np.isnan(line.y))
        if not keep.any():
            continue
        at = int(np.flatnonzero(keep)[-1])
        x, y = float(line.x[at]), float(line.y[at])
        if line.label not in newest or x >= newest[line.label][0]:
            newest[line.label] = (x, y, line.colour)
    return [(colour, label, value(y)) for label, (_, y, colour) in newest.items()]


def latest_text(entries: Sequence[Latest], width: int, height: int) -> Text:
    """The entries on one line, each after a stroke of its line's colour, if they fit
    `width`; else one a line if `height` allows; else the values alone on one line (the
    colours name the arms, as in every chart). Never an entry cut in two."""
    if not entries:
        return Text("no data yet", style="dim")

    def entry(colour: str, label: str | None, value: str, named: bool = True) -> Text:
        name = f"{label} " if label and named else ""
        return Text.assemble(("━ ", colour), name, (value, "bold"))

    named = [entry(*e) for e in entries]
    line = Text("  ").join(named)
    if line.cell_len <= width:
        return line
    if len(named) <= height:
        return Text("\n").join(named)
    return Text("  ").join(entry(*e, named=False) for e in entries)


class Chart(PlotWidget, can_focus=False):
    """A PlotWidget fed decimated series on demand; not focusable, so app keys stay the app's.

    Too short to label its values correctly (fewer rows inside the axes than `min_rows`), it
    shows its latest value per arm as text instead of the plot: a chart never lies."""

    DEFAULT_CSS = """
    Chart { border: round $secondary-darken-2; }
    Chart > .latest { display: none; layer: plot; padding: 0 1; }
    Chart.short > Grid { display: none; }
    Chart.short > .latest { display: block; }
    """

    def __init__(self, spec: ChartSpec, *, id: str | None = None) -> None:  # noqa: A002 (Textual)
        super().__init__(id=id, allow_pan_and_zoom=False)
        self.spec = spec
        self.elapsed_axis = ElapsedFormatter()
        self.drawn: tuple[int, object, Size, object] | None = None
        """(session id, data signature, size, reference) of the last draw: nothing new,
        nothing to do."""
        self.reference: Overlay | None = None
        """The overlay drawn under the lines (`replay --overlay`, shown); None: none."""
        self.drawn_end = 0.0
        """Where the x axis ended at the last draw."""
        self.y_axis = FittedFormatter()
        self.latest: list[Latest] = []
        """The text form's values, from the last draw."""
        self.followers: dict[tuple[object, ...], Follower] = {}
        """Each line's decimation, kept up to date as its points arrive (`follow`)."""
        self._title = ""
        self._subtitle: Text | None = None
        self.segments: Segments = {}
        """The braille dots of the segments drawn lately (`line_dots`)."""
        self._quiet = False
        """`draw` is handing textual-plot new datasets: it renders them itself, at the end."""
        self._short_text: tuple[object, ...] | None = None

    def compose(self) -> ComposeResult:
        yield from super().compose()
        yield Static(classes="latest")

    @property
    def min_rows(self) -> int:
        """Rows inside the axes needed to label the values correctly: the thermal chart one
        per state it names, a numeric one two ticks a row apart."""
        return len(THERMAL_NAMES) if self.spec.thermal_axis else MIN_ROWS

    @property
    def short(self) -> bool:
        """Too few rows to plot: the text form is shown."""
        return self.plot_size[1] < self.min_rows

    def on_mount(self) -> None:
        self.border_title = Text(self.spec.title(Session()))  # before the first draw's turn
        self.margin_top = 0
        self.margin_bottom = 1
        self.margin_left = 10 if self.spec.thermal_axis else 7
        self.set_x_formatter(self.elapsed_axis)
        self.set_y_formatter(ThermalFormatter() if self.spec.thermal_axis else self.y_axis)

    def render(self) -> RenderResult:
        """textual-plot's drawing, its canvases repainted only where a row changed: it draws
        every canvas afresh (each pixel asking for a refresh), where a new trial changes a
        few rows of the plot and often none of the axes' labels."""
        canvases = list(self.query(Canvas))
        # copies: a drawing may write into a row in place
        before = [([*map(list.copy, c._buffer)], [*map(list.copy, c._styles)]) for c in canvases]
        for canvas in canvases:  # textual-hires-canvas's own batching, without its refresh
            canvas._refreshes_pending += 1
        try:
            return super().render()
        finally:
            for canvas, (buffer, styles) in zip(canvases, before, strict=True):
                canvas._refreshes_pending -= 1
                if not canvas._refreshes_pending:
                    refresh_changed_rows(canvas, buffer, styles)

    @property
    def plot_size(self) -> tuple[int, int]:
        """Cells inside the axis lines: the widget minus the y-axis margin, the x-axis margin
        and the two axis lines (the border is outside `content_size`)."""
        width = self.content_size.width - self.margin_left - 2
        height = self.content_size.height - self.margin_top - self.margin_bottom - 2
        return width, height

    @property
    def columns(self) -> int:
        """Plot columns: what the series are decimated to."""
        return max(10, self.plot_size[0])

    def follow(
        self, session: Session, lines: Sequence[Line]
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Each line decimated to two bins a column, by its `Follower`: only the points new
        since the last draw are binned (a step line, a few points per change, is stepped and
        decimated whole, as its last point moves with the clock)."""
        bins = 2 * self.columns
        known, self.followers = self.followers, {}
        out = []
        for index, line in enumerate(lines):
            if line.step:
                out.append(decimate(*steps(line.x, line.y, end=elapsed(session)), bins))
                continue
            key = (id(session), bins, index, line.label, line.colour, line.ref)
            follower = known.get(key) or Follower(bins)
            self.followers[key] = follower
            out.append(follower.update(line.x, line.y))
        return out

    def draw(self, session: Session) -> bool:
        """Bring the chart up to date with `session` if what it shows changed since the last
        draw (its lines, or its x axis by a column or more); returns whether it did. It draws
        its canvases at once (not the whole chart at the next render) and repaints only
        their changed rows."""
        reference = self.reference if self.spec.reference is not None else None
        # a SOURCE arm's first trial places its reference: trials change what is drawn
        ref_key = (id(reference), trials(session)) if reference is not None else None
        key = (id(session), self.spec.data(session), self.content_size, ref_key)
        end = max(self.spec.xmax(session), 1.0)
        if key == self.drawn and abs(end - self.drawn_end) < self.drawn_end / self.columns:
            return False
        self.drawn, self.drawn_end = key, end
        title = self.spec.title(session)
        lines = self.spec.lines(session)
        self.latest = latest_values(lines, self.spec.value)  # the replayed session's alone
        if reference is not None and self.spec.reference is not None:
            title = f"{title} · ref: {reference.label}"
            lines = self.spec.reference(reference, session) + lines  # under the replayed lines
        if title != self._title:  # Textual repaints the chart on every title set
            self._title = title
            self.border_title = Text(title)
        if self.show_short():
            return True
        self.elapsed_axis.fit = max(2, self.columns // 7)
        self.y_axis.rows = self.plot_size[1]
        points = []
        for x, y in self.follow(session, lines):
            if len(x) == 1:  # a line needs two ends: a lone point would not show at all
                x, y = np.repeat(x, 2), np.repeat(y, 2)
            points.append((x, y))
        # explicit limits from exactly the points handed over: none falls outside the axes
        xlim = x_limits([x for x, _ in points], end)
        ylim = y_limits([y for _, y in points], self.spec.ylimits(session))
        self._quiet = True
        try:
            self.clear()
            for line, (x, y) in zip(lines, points, strict=True):
                self.plot(
                    x, y, line_style=line.colour, hires_mode=HiResMode.BRAILLE, label=line.label
                )
            self.set_xlimits(*xlim)
            self.set_ylimits(*ylim)
            self.place_legend()
        finally:
            self._quiet = False
        if self.canvases_ready():
            self.render()  # its canvases drawn now: only their changed rows are repainted
        else:
            self.refresh()  # drawn when Textual renders the chart, at its size by then
        return True

    def _rerender(self) -> None:
        """textual-plot's: draw at the next render, repainting the whole chart; while `draw`
        hands over the datasets, only noted (it draws the canvases itself)."""
        self._needs_rerender = True
        if not self._quiet:
            self.refresh()

    def canvases_ready(self) -> bool:
        """Whether the canvases are laid out at the chart's present size, so drawing them
        now is what a render would draw (textual-plot sizes them in `render` otherwise)."""
        if self._needs_canvas_resize:
            return False
        # an empty canvas (the top margin) is left as it is, by textual-plot too
        if any(c.size and c._canvas_size != c.size for c in self.query(Canvas)):
            return False
        plot = self.query_one("#plot", Canvas)
        inside = Region(1, 1, plot.size.width - 2, plot.size.height - 2)
        return bool(plot.size) and self._scale_rectangle == inside

    def on_resize(self) -> None:
        # the points stay until the next draw, but a legend placed for the old size may hide them
        self.place_legend()
        self.y_axis.rows = self.plot_size[1]  # the ticks are placed again at the new height
        self.show_short()

    def show_short(self) -> bool:
        """The text form if the chart is too short to plot (now: a resize redraws nothing),
        else the plot; returns whether it is short."""
        short = self.short
        self.set_class(short, "short")
        if short:
            width, height = self.content_size.width - 2, self.content_size.height  # padding
            shown = (tuple(self.latest), width, height)
            if shown != self._short_text:  # the same words again: nothing to repaint
                self._short_text = shown
                self.query_one(".latest", Static).update(latest_text(self.latest, width, height))
        return short

    def place_legend(self) -> None:
        """In the first corner (bottom left first) where it hides no line; else in the bottom
        border, if it fits there whole; else not at all.

        The legend floats over the plot: on a small chart it would cover the lines it names,
        and the arms keep their colours in every chart, so another chart's legend serves.
        """
        if not self.spec.legend:
            return
        labels = [label for label in self._labels if label is not None]
        width, height = self.plot_size
        size = Size(4 + max(map(len, labels), default=0) + 2, len(labels) + 2)  # "⠒⠒⠒ name", border
        if labels and size.width <= width and size.height <= height:
            drawn = self.drawn_cells(Region(1, 1, width, height))
            for corner in LEGEND_CORNERS:
                box = legend_box(corner, size, width, height)
                if not drawn[box.y : box.bottom, box.x : box.right].any():
                    self.show_legend(corner)
                    self.set_subtitle(None)
                    return
        self.show_legend(is_visible=False)
        room = self.size.width - SUBTITLE_ROOM
        fitting = (t for t in self.inline_legends() if len(t) and t.cell_len <= room)
        self.set_subtitle(next(fitting, None))

    def set_subtitle(self, subtitle: Text | None) -> None:
        """The bottom border's text, set only when it changes: Textual repaints the whole
        chart on every set."""
        if subtitle != self._subtitle:
            self._subtitle = subtitle
            self.border_subtitle = subtitle

    def inline_legends(self) -> list[Text]:
        """The legend on one line, each name after a stroke of its line's colour; then, for
        a narrower border, the references (the overlay) as one "ref" entry; then without
        them (the title names the reference)."""
        named = [(label, data.line_style)
                 for label, data in zip(self._labels, self._datasets, strict=True)
                 if label is not None and isinstance(data, LinePlot)]  # fmt: skip
        arms = [(label, style) for label, style in named if not label.startswith(REF)]
        refs = [(REF.strip(), REF_STYLE)] if len(arms) < len(named) else []
        return [legend_line(entries) for entries in (named, arms + refs, arms)]

    def inline_legend(self) -> Text:
        """The legend on one line, every line named (the widest of `inline_legends`)."""
        return self.inline_legends()[0]

    def drawn_cells(self, box: Region) -> np.ndarray:
        """Which cells (row, column) of the plot canvas the lines pass through, were the
        axes drawn around `box`."""
        cells = np.zeros((box.bottom + 1, box.right + 1), dtype=bool)
        # textual-plot's own limits and datasets (private: it has no getters for them)
        limits = (self._x_min, self._x_max, self._y_min, self._y_max)
        if limits[0] == limits[1] or limits[2] == limits[3]:
            return cells
        for data in self._datasets:
            if len(data.x):
                x, y = along(*to_cells(data.x, data.y, limits, box))
                cells[np.floor(y).astype(int), np.floor(x).astype(int)] = True
        return cells

    def _render_line_plot(self, dataset: LinePlot) -> None:
        """textual-plot's braille line drawing, the same dots in the same cells, but the
        points mapped and the dots set with numpy: its own loop per dot and per cell was
        most of a chart's render (it is called from PlotWidget's private `_render_plot`)."""
        if dataset.hires_mode != HiResMode.BRAILLE or len(dataset.x) < 2:
            super()._render_line_plot(dataset)
            return
        canvas = self.query_one("#plot", Canvas)
        limits = (self._x_min, self._x_max, self._y_min, self._y_max)
        x, y = to_cells(dataset.x, dataset.y, limits, self._scale_rectangle)  # as one point's
        paint_braille(canvas, *line_dots(canvas, x, y, self.segments), dataset.line_style)

    def get_hires_pixel_from_coordinate(
        self, x: FloatScalar, y: FloatScalar
    ) -> tuple[FloatScalar, FloatScalar]:
        """Data → canvas position, onto the cells inside the axes.

        textual-plot maps [min, max] onto the closed span [left, right] of its box and the
        canvas floors positions to cells, so x = max lands on the right axis line and
        y = min on the bottom one, and the axes drawn next hide them (the end of a step
        line, an arm's lowest trials). Here the span is half-open: the extremes fall in the
        last cells inside the axes, the same ones `_scale_rectangle` frames.
        """
        box = self._scale_rectangle  # private in textual-plot: the axes are drawn around it
        return to_cells(x, y, (self._x_min, self._x_max, self._y_min, self._y_max), box)

    def get_pixel_from_coordinate(self, x: FloatScalar, y: FloatScalar) -> tuple[int, int]:
        """Data → canvas cell, as the lines are drawn: a tick labels the row its value's
        points land on (textual-plot's own mapping differs by up to a row, so on a short
        thermal chart a state's line could lie on the row of the next state's name).

        textual-plot moves a tick at y = min down a row (its mapping puts y = min on the
        axis line, ours in the row above it): one row up here, so it stays on the points.
        """
        cx, cy = self.get_hires_pixel_from_coordinate(x, y)
        row = math.floor(cy)
        return math.floor(cx), row - 1 if y == self._y_min else row


SUBTITLE_ROOM = 6
"""Cells of the bottom border a subtitle leaves: its corners and the space around it."""
INSIDE = 1e-6
"""A millionth of a cell short of the far edge: the floor keeps it inside the axes."""

LEGEND_CORNERS = (
    LegendLocation.BOTTOMLEFT,
    LegendLocation.TOPLEFT,
    LegendLocation.TOPRIGHT,
    LegendLocation.BOTTOMRIGHT,
)


Limits = tuple[float, float, float, float]
"""x min, x max, y min, y max."""


@overload
def to_cells(
    x: np.ndarray, y: np.ndarray, limits: Limits, box: Region
) -> tuple[np.ndarray, np.ndarray]: ...
@overload
def to_cells(
    x: FloatScalar, y: FloatScalar, limits: Limits, box: Region
) -> tuple[FloatScalar, FloatScalar]: ...
def to_cells(
    x: np.ndarray | FloatScalar, y: np.ndarray | FloatScalar, limits: Limits, box: Region
) -> tuple[np.ndarray | FloatScalar, np.ndarray | FloatScalar]:
    """Data → plot canvas position (in cells, fractional), onto the cells inside `box`."""
    x_min, x_max, y_min, y_max = limits
    fx = (x - x_min) / (x_max - x_min)
    fy = (y - y_min) / (y_max - y_min)
    return box.x + fx * (box.width - INSIDE), box.bottom - INSIDE - fy * (box.height - INSIDE)


def along(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Points along a polyline, closer than a braille dot: one in every cell it crosses."""
    lengths = np.maximum(np.abs(np.diff(x)), np.abs(np.diff(y)))
    at = np.r_[0.0, np.cumsum(np.ceil(lengths * 4) + 1)]
    t = np.arange(at[-1] + 1)
    return np.interp(t, at, x), np.interp(t, at, y)


Segments = dict[tuple[int, int, int, int], list[tuple[int, int]]]
"""Bresenham's dots of a segment, by its integer ends (a chart's memo: `line_dots`)."""
SEGMENTS_KEPT = 20_000
"""A chart's memo of segments is emptied past this many (a few MB at most)."""


def line_dots(
    canvas: Canvas, x: np.ndarray, y: np.ndarray, memo: Segments | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The braille dots (canvas cells × (2, 4)) of the polyline through (x, y) in canvas
    cells, as textual-hires-canvas's `draw_hires_lines` finds them: each segment clipped to
    the canvas, then its own Bresenham (private: reused, so the dots are exactly its)."""
    width, height = canvas._canvas_region.width, canvas._canvas_region.height
    x0, y0, x1, y1 = x[:-1], y[:-1], x[1:], y[1:]
    inside = (np.minimum(x0, x1) >= 0) & (np.maximum(x0, x1) <= width - 1)
    inside &= (np.minimum(y0, y1) >= 0) & (np.maximum(y0, y1) <= height - 1)
    dot_x, dot_y = np.floor(x * 2).astype(np.int64), np.floor(y * 4).astype(np.int64)
    bresenham = canvas._get_line_coordinates
    memo = {} if memo is None else memo
    if len(memo) > SEGMENTS_KEPT:
        memo.clear()
    ends = np.stack([dot_x[:-1], dot_y[:-1], dot_x[1:], dot_y[1:]], axis=1).tolist()
    found: list[list[tuple[int, int]]] = []
    for i, whole in enumerate(inside.tolist()):
        if whole:  # the clip would hand the segment back as it is
            key = tuple(ends[i])  # most segments stay put from one trial to the next
            dots = memo.get(key)
            if dots is None:
                dots = memo[key] = bresenham(*ends[i])
            found.append(dots)
            continue
        clipped = canvas._clip_line_cohen_sutherland(
            float(x0[i]), float(y0[i]), float(x1[i]), float(y1[i])
        )
        if clipped is not None:
            a, b, c, d = clipped
            found.append(
                bresenham(
                    math.floor(a * 2), math.floor(b * 4), math.floor(c * 2), math.floor(d * 4)
                )
            )
    flat = np.fromiter(
        itertools.chain.from_iterable(itertools.chain.from_iterable(found)), dtype=np.int64
    )
    return flat[0::2], flat[1::2]


BRAILLE_CHARS: tuple[str | None, ...] = tuple(
    hires_pixels[HiResMode.BRAILLE][tuple((mask >> bit) & 1 for bit in range(8))]
    for mask in range(256)
)
"""The braille character of each dot pattern: bit k is dot k of the cell's 4×2 grid read row
by row (textual-hires-canvas's own table, so the characters are its)."""


def paint_braille(canvas: Canvas, dot_x: np.ndarray, dot_y: np.ndarray, style: str) -> None:
    """Set the cells the dots fall in to the braille character of their dots, in `style`,
    as `Canvas.set_hires_pixels` does (a cell takes this line's dots alone), one refresh."""
    width, height = canvas._canvas_region.width, canvas._canvas_region.height
    cell_x, cell_y = dot_x // 2, dot_y // 4
    keep = (cell_x >= 0) & (cell_x < width) & (cell_y >= 0) & (cell_y < height)
    masks = np.zeros(width * height, dtype=np.int64)
    bits = np.left_shift(1, (dot_y[keep] % 4) * 2 + dot_x[keep] % 2)
    np.bitwise_or.at(masks, cell_y[keep] * width + cell_x[keep], bits)
    buffer, styles = canvas._buffer, canvas._styles
    cells = np.flatnonzero(masks)
    for cell, mask in zip(cells.tolist(), masks[cells].tolist(), strict=True):
        if char := BRAILLE_CHARS[mask]:
            row, col = divmod(cell, width)
            buffer[row][col] = char
            styles[row][col] = style
    canvas.refresh()


def refresh_changed_rows(canvas: Canvas, buffer: list[list[str]], styles: list[list[str]]) -> None:
    """Refresh the rows of `canvas` that differ from `buffer` and `styles` (copies of its
    rows before a drawing); all of it if its size changed."""
    now, now_styles = canvas._buffer, canvas._styles
    if len(now) != len(buffer) or (now and len(now[0]) != len(buffer[0])):
        canvas.refresh()
        return
    width = len(now[0]) if now else 0
    changed = [y for y in range(len(now)) if now[y] != buffer[y] or now_styles[y] != styles[y]]
    for run in runs_of(changed):
        canvas.refresh(Region(0, run[0], width, len(run)))


def runs_of(rows: list[int]) -> list[list[int]]:
    """Ascending numbers grouped into runs of consecutive ones."""
    out: list[list[int]] = []
    for row in rows:
        if out and out[-1][-1] + 1 == row:
            out[-1].append(row)
        else:
            out.append([row])
    return out


def legend_box(corner: LegendLocation, size: Size, width: int, height: int) -> Region:
    """Where textual-plot puts a legend of `size` in `corner` of a `width`×`height` plot
    (canvas cells, the axes at 0)."""
    left = corner in (LegendLocation.TOPLEFT, LegendLocation.BOTTOMLEFT)
    top = corner in (LegendLocation.TOPLEFT, LegendLocation.TOPRIGHT)
    x = 1 if left else width + 1 - size.width
    y = 1 if top else height + 1 - size.height
    return Region(x, y, size.width, size.height)


MARGIN = 0.05
"""Of the data's span, above and below an autoscaled range: extremes clear the axis lines."""


def extent(values: list[np.ndarray]) -> tuple[float, float] | None:
    """The smallest and largest value over all the series, or None if all are empty."""
    present = [v for v in values if len(v)]
    if not present:
        return None
    return min(float(np.min(v)) for v in present), max(float(np.max(v)) for v in present)


def x_limits(xs: list[np.ndarray], end: float) -> tuple[float, float]:
    """From 0 to `end` (the session or the longest arm), widened to any point beyond."""
    span = extent(xs)
    return (0.0, end) if span is None else (min(0.0, span[0]), max(end, span[1]))


def y_limits(
    ys: list[np.ndarray], fixed: tuple[float | None, float | None]
) -> tuple[float | None, float | None]:
    """A chart's fixed limits widened to its data, or the data's range and a margin."""
    span = extent(ys)
    if span is None:
        return fixed
    lo, hi = span
    if fixed != (None, None):
        return (
            lo if fixed[0] is None else min(fixed[0], lo),
            hi if fixed[1] is None else max(fixed[1], hi),
        )
    flat = readable_range(ys)
    if flat != (None, None):
        return flat
    margin = (hi - lo) * MARGIN
    return lo - margin, hi + margin


def readable_range(ys: list[np.ndarray]) -> tuple[float | None, float | None]:
    """Autoscale, but a flat series (free disk) gets a span its tick labels can tell apart."""
    values = [y for y in ys if len(y)]
    if not values:
        return (None, None)
    lo = float(min(np.min(y) for y in values))
    hi = float(max(np.max(y) for y in values))
    least = max(1.0, abs(hi) * 0.02)
    if hi - lo >= least:
        return (None, None)
    middle = (hi + lo) / 2
    return (middle - least / 2, middle + least / 2)


class Strip(Horizontal):
    """A label and a Sparkline: a chart when a strip is enough (the compact layout)."""

    DEFAULT_CSS = """
    Strip { height: 2; }
    Strip > Label { width: 34; }
    Strip > Sparkline { width: 1fr; height: 2; }
    """

    def __init__(
        self,
        read: Callable[[Session], tuple[str, np.ndarray]],
        *,
        id: str | None = None,  # noqa: A002
    ) -> None:
        super().__init__(id=id)
        self.read = read
        self.drawn: tuple[int, str, int, int] | None = None
        """(session id, label, values, width) of the last draw: the same again, nothing to do
        (host readings every second change the session, not every strip)."""

    def compose(self) -> ComposeResult:
        yield Label()
        yield Sparkline([])

    def draw(self, session: Session) -> bool:
        spark = self.query_one(Sparkline)
        label, values = self.read(session)
        key = (id(session), label, len(values), spark.size.width)
        if key == self.drawn:
            return False
        self.drawn = key
        values = values[~np.isnan(values)]
        self.query_one(Label).update(Text(label))
        # the sparkline buckets by max: hand it per-column extremes, not 100k points
        _, y = decimate(np.arange(len(values), dtype=float), values, max(spark.size.width, 1))
        spark.data = y.tolist()
        return True


def _current_decode(session: Session) -> tuple[str, np.ndarray]:
    arm = session.arms.get(session.current_arm or "")
    if arm is None or not len(arm):
        return "decode tok/s —", np.empty(0)
    timed = column(arm.columns["warmup"]) == 0
    values = column(arm.columns["decode_tps"])[timed]
    last = values[~np.isnan(values)]
    figure = f"{last[-1]:.1f}" if len(last) else "—"
    return f"decode {figure} tok/s · {arm.name}", values


def _session_strip(
    attr: str, name: str, fmt: Callable[[float], str]
) -> Callable[[Session], tuple[str, np.ndarray]]:
    def read(session: Session) -> tuple[str, np.ndarray]:
        series = getattr(session, attr)
        last = series.last()
        return f"{name} {'—' if last is None else fmt(last)}", column(series.value)

    return read


def _thermal_name(value: float) -> str:
    return THERMAL_NAMES[int(value)]


class Strips(Vertical):
    """Decode of the current arm, thermal state, battery: one line each."""

    DEFAULT_CSS = "Strips { height: auto; padding: 0 1; }"

    def compose(self) -> ComposeResult:
        yield Strip(_current_decode, id="strip-decode")
        yield Strip(_session_strip("thermal", "thermal", _thermal_name), id="strip-thermal")
        battery = _session_strip("battery", "battery %", lambda v: f"{v:.0f}")
        yield Strip(battery, id="strip-battery")


class Charts(Vertical):
    """The large charts, by id; a layout arranges (or hides) them."""

    def __init__(self, ids: Sequence[str], *, id: str | None = None) -> None:  # noqa: A002 (Textual)
        super().__init__(id=id)
        self.ids = tuple(ids)

    def compose(self) -> ComposeResult:
        for name in self.ids:
            yield Chart(CHARTS[name], id=name)
