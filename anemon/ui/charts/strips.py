"""Strips: a label and a Sparkline per figure, where a strip is enough (the compact layout)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Label, Sparkline

from anemon.events import THERMAL_NAMES
from anemon.store import Session
from anemon.ui.series import column, decimate


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
