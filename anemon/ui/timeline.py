"""The timeline: state, speed, position / duration, and a bar with arm starts, errors and
alerts. A replay always shows it; a live run once an alert has a lasting mark to show."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.notifications import SeverityLevel
from textual.widgets import Static

from anemon.control.battery import SIMULATED_OPERATOR
from anemon.events import AlertEvent, Event, MarkerEvent, PreflightEvent
from anemon.feeds import ReplayControls
from anemon.store import Session
from anemon.text import printable
from anemon.ui import steady
from anemon.ui.series import bar, clock, speed_text

ALERT_MARK = "⚠"
OPERATED = "{note}: the simulator answers the battery protocol's prompts, nothing to do"
"""The toast of a simulated operator's marker ("simulated operator: unplugs the phone in 5 s")."""


@dataclass(frozen=True, slots=True)
class Toast:
    """A notification the dashboard owes the operator; `bell`: ring the terminal bell too."""

    message: str
    severity: SeverityLevel = "warning"
    bell: bool = False


class AlertMarks:
    """Alerts (and a pre-flight that did not simply pass, and what the simulated operator does)
    as the feed emits them: lasting marks for the timeline (alerts), and the toasts not shown
    yet (`take`). Subscribed to the feed."""

    def __init__(self) -> None:
        self.times: list[float] = []
        """When each alert happened (session seconds)."""
        self._toasts: list[Toast] = []

    def add(self, event: Event) -> None:
        if isinstance(event, AlertEvent):
            self.times.append(event.t)
            arm = f"{printable(event.arm)}: " if event.arm else ""
            self._toasts.append(Toast(f"alert: {arm}{printable(event.note or event.alert)}",
                                      "warning", bell=True))  # fmt: skip
        elif isinstance(event, PreflightEvent) and event.status != "pass":
            self._toasts.append(preflight_toast(event))
        elif isinstance(event, MarkerEvent) and event.source == SIMULATED_OPERATOR:
            # at the demo's speed its prompt is answered before anyone can read it
            self._toasts.append(Toast(OPERATED.format(note=printable(event.note)), "information"))

    def take(self) -> list[Toast]:
        toasts, self._toasts = self._toasts, []
        return toasts


def preflight_toast(event: PreflightEvent) -> Toast:
    """The checks that did not pass, one line each."""
    lines = [f"{c.status}: {c.check}: {c.note or c.reading}"
             for c in event.checks if c.status != "pass"]  # fmt: skip
    failed = event.status == "fail"
    head = "pre-flight failed" + (" (going on: --force)" if event.forced else "")
    head = head if failed else "pre-flight warnings"
    text = "\n".join(printable(line) for line in [head, *lines])
    return Toast(text, "error" if failed else "warning", bell=failed)


def marks(session: Session, start: float, alerts: AlertMarks | None = None) -> dict[float, str]:
    """Where arms started (┃), errors happened (✗) and alerts fired (⚠), in seconds into the
    recording."""
    found: dict[float, str] = {}
    for arm in session.arms.values():
        if arm.start is not None:
            found[arm.start.t - start] = "┃"
    for error in session.errors:
        found[error.t - start] = "✗"
    for t in alerts.times if alerts is not None else ():
        found[t - start] = ALERT_MARK
    return found


def live_text(session: Session, alerts: AlertMarks, width: int) -> Text:
    """A live run's timeline: from the session's start to now, its marks on top."""
    start = session.first_t or 0.0
    now = max(session.last_t - start, 0.0)
    head = f"● live  {clock(now)}  {len(alerts.times)} alert(s)  "
    line = bar(width - len(head), now, now, marks(session, start, alerts))
    return Text.assemble((head, "bold"), (line, "cyan"))


def timeline_text(replay: ReplayControls, width: int, alerts: AlertMarks | None = None) -> Text:
    if replay.paused:
        state = "‖ paused"  # not ⏸: browser fonts (textual-serve) draw it as a missing glyph
    elif replay.finished:
        state = "■ end"
    else:
        state = "▶ playing"
    where = f"{clock(replay.position)} / {clock(replay.duration)}"
    head = f"{state} {speed_text(replay.speed)}  {where}  "
    found = marks(replay.session, replay.start, alerts)
    line = bar(width - len(head), replay.position, replay.duration, found)
    return Text.assemble((head, "bold"), (line, "cyan"))


class Timeline(Static):
    """Shown for a replay only; redrawn on the replay timer when its text changes."""

    DEFAULT_CSS = "Timeline { height: 1; padding: 0 1; }"

    def __init__(
        self,
        replay: ReplayControls | None,
        *,
        alerts: AlertMarks | None = None,
        session: Session | None = None,
        id: str | None = None,  # noqa: A002 (Textual)
    ) -> None:
        super().__init__(id=id)
        self.replay = replay
        self.alerts = alerts
        self.session = session
        """A live run's session (its timeline is shown once there is an alert)."""
        self.display = replay is not None
        self.shown: str | None = None

    def show(self) -> None:
        width = max(self.content_size.width, 20)
        if self.replay is not None:
            text = timeline_text(self.replay, width, self.alerts)
        elif self.alerts is not None and self.alerts.times and self.session is not None:
            self.display = True
            text = live_text(self.session, self.alerts, width)
        else:
            return
        if text.plain != self.shown:
            self.shown = text.plain
            steady.update(self, text)  # a replay playing moved it at every round
