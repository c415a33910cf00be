"""What the dashboard adds when it shows several runs (`anemon run A.toml B.toml`): an
overview strip (one line per device: phase, arm, decode, thermal state, watts) above a tab
per device (`ui.app.Dashboard` composes them; one run has neither).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from rich.text import Text
from textual.widgets import Static

from anemon.feeds.runs import Run
from anemon.store import Session
from anemon.text import printable
from anemon.ui import steady
from anemon.ui.status import SEPARATOR, phase_text, power_text, thermal_text

TAB_KEYS_HELP = "Previous or next phone (when the tab bar has focus)"
"""The keys help's line on the tabs (Textual's `Tabs`: the keys act on the selected tab's run;
a click on a tab selects it too)."""
CSS = """
#overview { height: auto; padding: 0 1; background: $panel; }
#tabs { height: 1fr; }
#tabs > ContentSwitcher { height: 1fr; }
#tabs TabPane { height: 1fr; padding: 0; layout: vertical; }
"""


def last_decode(session: Session) -> float | None:
    """The current arm's latest decode rate (tok/s), warm-ups included."""
    arm = session.arms.get(session.current_arm or "")
    if arm is None or not len(arm):
        return None
    value = float(arm.columns["decode_tps"][-1])
    return None if np.isnan(value) else value


def overview_line(label: str, session: Session, reads_power: bool | None) -> Text:
    """One device in the overview: its label, phase, arm, decode, thermal state and watts."""
    decode = last_decode(session)
    return Text(SEPARATOR).join(
        [
            Text(printable(label), style="bold"),
            Text(printable(phase_text(session))),
            Text.assemble("arm ", (printable(session.current_arm or "—"), "bold")),
            Text(f"decode {'—' if decode is None else f'{decode:.1f} tok/s'}"),
            Text.assemble("thermal ", thermal_text(session.thermal.last())),
            power_text(session, reads_power),
        ]
    )


class Overview(Static):
    """Every run at a glance, one line each; redrawn when any session changed."""

    def __init__(self, runs: Sequence[Run], *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.runs = runs
        self.drawn: tuple[object, ...] | None = None

    def show(self) -> None:
        key = tuple((id(r.feed.session), r.feed.session.version) for r in self.runs)
        if key == self.drawn:
            return
        self.drawn = key
        lines = [overview_line(r.label, r.feed.session, r.feed.reads_power) for r in self.runs]
        steady.update(self, Text("\n").join(lines))
