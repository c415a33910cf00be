"""The status line: source, tag, phase, arm, elapsed, trials, device state, cooldown."""

from __future__ import annotations

import numpy as np
from rich.text import Text
from textual.widgets import Static

from anemon.events import thermal_name
from anemon.store import Session
from anemon.ui.series import clock, column

_THERMAL_STYLES = ("green", "yellow", "bold dark_orange", "bold red")


def timed_trials(session: Session) -> int:
    """Trials so far, warm-ups not counted (as in the summary)."""
    arms = session.arms.values()
    return sum(len(arm) - int(np.sum(column(arm.columns["warmup"]))) for arm in arms)


def thermal_text(value: float | None) -> Text:
    if value is None:
        return Text("—")
    state = int(value)
    return Text(thermal_name(state) or "—", style=_THERMAL_STYLES[state])


def session_tag(session: Session) -> str | None:
    """The tag the latest START line carried (a log has no header to name it)."""
    starts = [arm.start for arm in session.arms.values() if arm.start is not None]
    tagged = [start for start in starts if start.tag]
    return max(tagged, key=lambda start: start.t).tag if tagged else None


def status_text(session: Session, title: str, tag: str | None = None) -> Text:
    """All from the Session (never the wall clock): replays and snapshots agree.

    `tag` is the session's own (a recording's plan); without one, the latest START's.
    """
    tag = tag or session_tag(session)
    phase = session.phase.phase if session.phase is not None else None
    elapsed = session.last_t - session.first_t if session.first_t is not None else 0.0
    battery = session.battery.last()
    parts: list[Text | str] = [
        Text(title, style="bold"),
        f"tag {tag or '—'}",
        f"phase {phase or '—'}",
        Text.assemble("arm ", (session.current_arm or "—", "bold")),
        f"elapsed {clock(elapsed)}",
        f"trials {timed_trials(session)}",
        Text.assemble("thermal ", thermal_text(session.thermal.last())),
        f"battery {'—' if battery is None else f'{battery:.0f} %'} {session.battery_state or ''}",
    ]
    if session.errors:
        parts.append(Text(f"errors {len(session.errors)}", style="bold red"))
    text = Text(" │ ").join(Text(p) if isinstance(p, str) else p for p in parts)
    if session.cooldown is not None:
        text.append("\n")
        text.append_text(cooldown_text(session))
    return text


def cooldown_text(session: Session) -> Text:
    c = session.cooldown
    assert c is not None
    left = max(0.0, c.min_s - c.elapsed_s)
    return Text.assemble(
        ("cooling ", "bold cyan"),
        f"{clock(c.elapsed_s)} │ min {clock(c.min_s)} ({clock(left)} left) │ until ",
        (c.until, "bold"),
        " │ now ",
        thermal_text(c.thermal),
        f" ({c.basis}) │ cap {clock(c.cap_s)} ({clock(max(0.0, c.cap_s - c.elapsed_s))} left)",
    )


class StatusLine(Static):
    """One or two lines at the top; the text is built from data, never parsed as markup."""

    DEFAULT_CSS = "StatusLine { height: auto; padding: 0 1; background: $boost; }"

    def __init__(
        self,
        title: str,
        *,
        tag: str | None = None,
        id: str | None = None,  # noqa: A002 (Textual)
    ) -> None:
        super().__init__(id=id)
        self.feed_title = title
        self.tag = tag
        self.drawn: tuple[int, int] | None = None

    def show(self, session: Session) -> None:
        key = (id(session), session.version)
        if key != self.drawn:
            self.drawn = key
            self.update(status_text(session, self.feed_title, self.tag))
