"""Strips: a label, a Sparkline and its scale per figure, where a strip is enough (the compact
layout). Decode has a strip per arm (the latest `ARM_STRIPS`): one sparkline never mixes arms."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Label, Sparkline

from anemon.events import THERMAL_NAMES
from anemon.store import Session
from anemon.store.session import ArmSeries
from anemon.ui import steady
from anemon.ui.series import column, decimate

ARM_STRIPS = 2
"""Decode strips in the compact layout: the latest arms (an A/B pair), the current one among
them; what fits 80x24 with the brief table and the log."""


@dataclass(frozen=True)
class Shown:
    """What a strip shows now."""

    label: str
    """Its name and latest figure (two lines at most)."""
    values: np.ndarray
    """Drawn as the sparkline, from its minimum to its maximum."""
    figure: Callable[[float], str]
    """A value as its label and scale say it."""
    unit: str = ""
    """Under the scale."""


Read = Callable[[Session], Shown | None]
"""What a strip shows of a session; None: nothing (the strip takes no row)."""


def scale(shown: Shown, values: np.ndarray) -> str:
    """The sparkline's range, `min–max` over its unit: its bars run from the one to the other."""
    if not len(values):
        return ""
    low, high = shown.figure(float(values.min())), shown.figure(float(values.max()))
    return f"{low}–{high}\n{shown.unit}".rstrip()


class Strip(Horizontal):
    """A label, a Sparkline and its scale: a chart when a strip is enough (the compact layout)."""

    DEFAULT_CSS = """
    Strip { height: 2; }
    Strip.empty { height: 0; }
    Strip > .label { width: 26; }
    Strip > Sparkline { width: 1fr; height: 2; }
    Strip > .scale { width: 17; padding: 0 0 0 1; }  /* "nominal–critical" */
    """

    def __init__(self, read: Read, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.read = read
        self.drawn: tuple[int, str, int, int] | None = None
        """(session id, label, values, width) of the last draw: the same again, nothing to do
        (host readings every second change the session, not every strip)."""

    def compose(self) -> ComposeResult:
        yield Label(classes="label")
        yield Sparkline([])
        yield Label(classes="scale")

    def draw(self, session: Session) -> bool:
        spark = self.query_one(Sparkline)
        shown = self.read(session)
        self.set_class(shown is None, "empty")  # drawn still: it shows once there is data
        label, values = ("", np.empty(0)) if shown is None else (shown.label, shown.values)
        key = (id(session), label, len(values), spark.size.width)
        if key == self.drawn:
            return False
        self.drawn = key
        values = values[~np.isnan(values)]
        named = Text(label, no_wrap=True, overflow="ellipsis")
        ranged = Text("" if shown is None else scale(shown, values))
        # each trial's new figure, not a new size (the labels' widths are the CSS's above)
        steady.update(self.query_one(".label", Label), named)
        steady.update(self.query_one(".scale", Label), ranged)
        # the sparkline buckets by max: hand it per-column extremes, not 100k points
        _, y = decimate(np.arange(len(values), dtype=float), values, max(spark.size.width, 1))
        spark.data = y.tolist()
        return True


def _tps(value: float) -> str:
    return f"{value:.1f}"


def shown_arms(session: Session) -> list[ArmSeries]:
    """The arms the decode strips show: the latest `ARM_STRIPS` first seen, the current arm
    always among them, in the order they were first seen (a row keeps its arm as A/B
    alternates)."""
    arms = session.recent_arms(ARM_STRIPS)
    current = session.arms.get(session.current_arm or "")
    if current is not None and current not in arms:
        arms = [*[arm for arm in arms if arm is not current][1:], current]
    return sorted(arms, key=lambda arm: arm.index)


def arm_decode(slot: int) -> Read:
    """Decode tok/s of the `slot`-th arm shown (`shown_arms`): its timed trials, its name."""

    def read(session: Session) -> Shown | None:
        arms = shown_arms(session)
        if slot >= len(arms):
            return Shown("decode tok/s —", np.empty(0), _tps) if slot == 0 else None
        arm = arms[slot]
        timed = column(arm.columns["warmup"]) == 0
        values = column(arm.columns["decode_tps"])[timed]
        last = values[~np.isnan(values)]
        figure = _tps(last[-1]) if len(last) else "—"
        return Shown(f"{arm.name}\ndecode {figure} tok/s", values, _tps, "tok/s")

    return read


def _session_strip(attr: str, name: str, figure: Callable[[float], str], unit: str = "") -> Read:
    def read(session: Session) -> Shown:
        series = getattr(session, attr)
        last = series.last()
        label = f"{name} {'—' if last is None else figure(last)} {unit}".rstrip()
        return Shown(label, column(series.value), figure, unit)

    return read


def _thermal_name(value: float) -> str:
    return THERMAL_NAMES[int(value)]


class Strips(Vertical):
    """Decode of the latest arms (one strip each), thermal state, battery."""

    DEFAULT_CSS = "Strips { height: auto; padding: 0 1; }"

    def compose(self) -> ComposeResult:
        for slot in range(ARM_STRIPS):
            yield Strip(arm_decode(slot), id=f"strip-decode-{slot}")
        yield Strip(_session_strip("thermal", "thermal", _thermal_name), id="strip-thermal")
        battery = _session_strip("battery", "battery", lambda v: f"{v:.0f}", "%")
        yield Strip(battery, id="strip-battery")
