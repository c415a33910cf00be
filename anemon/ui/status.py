"""The status line: source, tag, phase, arm, elapsed, trials, device state, power, cooldown."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rich.text import Text
from textual.widgets import Static

from anemon.events import RecordEvent, TelemetryEvent, thermal_name
from anemon.store import Session
from anemon.ui import steady
from anemon.ui.series import charging_text, clock

_THERMAL_STYLES = ("green", "yellow", "bold dark_orange", "bold red")


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


def power_state(session: Session) -> str:
    """The charging state in words (`charging_text`): the host's, else the app's."""
    plugged = session.telemetry[-1].plugged if session.telemetry else None
    return charging_text(session.charging, plugged, session.battery_state)


def power_text(session: Session, reads_power: bool | None = None) -> Text:
    """The latest power reading and the charging state: "power 3.4 W · on battery"; "power —"
    while there is none (see POWER_HELP), "power n/a (devicectl)" where the backend cannot
    read it (`reads_power` False). Charging is flagged: those watts are the charger's."""
    if reads_power is False:
        return Text("power n/a (devicectl)", style="italic")  # dim: < 4.5:1
    watts = session.power_w.last()
    text = Text(f"power {'—' if watts is None else f'{watts:.1f} W'}")
    state = power_state(session)
    if state != "—":
        text.append(" · ")
        text.append(state, style="yellow" if state == "charging" else "")
    return text


def app_text(reading: TelemetryEvent) -> Text:
    """The bench app's latest memory and CPU: "app 1.93 GB · CPU 85 %" (n/a for a figure the
    reading lacks: a process's first sample has no CPU)."""
    memory = "n/a" if reading.mem_gb is None else f"{reading.mem_gb:.2f} GB"
    cpu = "n/a" if reading.cpu_pct is None else f"{reading.cpu_pct:.0f} %"
    return Text(f"app {memory} · CPU {cpu}")


POWER_HELP = (
    "power: the phone's draw (battery current × voltage), read by the host about once a "
    "second with pymobiledevice3 and the simulator; only readings on battery are the load. "
    "devicectl cannot read power, nor does a mirrored log carry it: there it stays —."
)
"""The status line's tooltip: why power may show —."""


def phase_text(session: Session) -> str:
    """The phase; while the queue waits (idle), why: the operator's prompt or the hold."""
    event = session.phase
    if event is None:
        return "phase —"
    if event.phase == "idle" and event.reason:
        return f"phase idle: {event.reason}"
    return f"phase {event.phase}"


def cooling(session: Session) -> bool:
    """A cooldown is in progress: the controller's latest phase is "cooling" (`k` ends it,
    `w` extends it)."""
    phase = session.phase
    return phase is not None and phase.phase == "cooling"


def run_end(session: Session, record: Path | None) -> str:
    """The app's last word on a plan run, once its queue is through: aborted (the controller's
    last phase says so: `X`, or a stop) or done, and where it was recorded."""
    phase = session.phase
    how = "run aborted" if phase is not None and phase.phase == "aborted" else "run done"
    return f"{how}, recording at {record}" if record else f"{how}, not recorded"


def status_text(
    session: Session,
    title: str,
    tag: str | None = None,
    width: int | None = None,
    reads_power: bool | None = None,
    *,
    held: bool = False,
    note: str | None = None,
    waiting: str | None = None,
) -> Text:
    """All from the Session (never the wall clock): replays and snapshots agree.

    `tag` is the session's own (a recording's plan); without one, the latest START's. With a
    `width`, the parts are packed into lines of that width, none cut in two. `held`: the
    operator holds the run's queue (`p`), said for as long as it lasts. `note`: the app's own
    last word (the run is done), after the rest. `waiting`: the feed's `status_note` ("waiting
    for PATH"), said after the title while the session has no record event.
    """
    tag = tag or session_tag(session)
    elapsed = session.last_t - session.first_t if session.first_t is not None else 0.0
    battery = session.battery.last()
    parts: list[Text | str] = [
        Text(title, style="bold"),
        *([Text(waiting, style="bold yellow")] if waiting and not has_records(session) else []),
        f"tag {tag or '—'}",
        Text(phase_text(session)),
        Text.assemble("arm ", (session.current_arm or "—", "bold")),
        f"elapsed {clock(elapsed)}",
        f"trials {session.timed_trials}",
        Text.assemble("thermal ", thermal_text(session.thermal.last())),
        f"battery {'—' if battery is None else f'{battery:.0f} %'}",
        power_text(session, reads_power),
        *([app_text(session.process)] if session.process is not None else []),
    ]
    if held:
        parts.append(Text("queue held", style="bold black on yellow"))
    if session.errors:
        parts.append(Text(f"errors {len(session.errors)}", style="bold red"))
    if note:
        parts.append(Text(note, style="bold green"))
    text = pack([Text(p) if isinstance(p, str) else p for p in parts], width)
    if session.cooldown is not None:
        text.append("\n")
        text.append_text(cooldown_text(session, width))
    return text


def has_records(session: Session) -> bool:
    """Whether any line of the log has been read into the session."""
    return bool(session.arms) or any(isinstance(e, RecordEvent) for e in session.log)


SEPARATOR = " │ "


def pack(parts: list[Text], width: int | None) -> Text:
    """The parts joined by SEPARATOR, a new line (not a separator) wherever the next part
    would not fit in `width` (a part longer than a line is left to wrap)."""
    if width is None:
        return Text(SEPARATOR).join(parts)
    lines: list[Text] = []
    for part in parts:
        if lines and lines[-1].cell_len + len(SEPARATOR) + part.cell_len <= width:
            lines[-1].append(SEPARATOR)
            lines[-1].append_text(part)
        else:
            lines.append(part.copy())
    return Text("\n").join(lines)


COOLDOWN_ELISIONS = ("basis", "cap left", "min left")
"""What a cooldown line narrower than its parts leaves out, first to last: the thermal
reading's source ("(host)"), the cap's time left, the minimum's time left; if it still does
not fit, its parts go on the next line at a separator, never cut mid-phrase (`pack`)."""


def joined_width(parts: list[Text]) -> int:
    """The cells of `parts` on one line, SEPARATOR between them."""
    return sum(part.cell_len for part in parts) + len(SEPARATOR) * (len(parts) - 1)


def cooldown_text(session: Session, width: int | None = None) -> Text:
    """The cooldown's line: "cooling 0:25 │ min 3:00 (2:34 left) │ until none │ now serious
    (host) │ cap 10:00 (9:34 left)", within `width` (`COOLDOWN_ELISIONS`)."""
    for shown in range(len(COOLDOWN_ELISIONS) + 1):
        parts = cooldown_parts(session, COOLDOWN_ELISIONS[:shown])
        if width is None or joined_width(parts) <= width:
            break
    return pack(parts, width)


def cooldown_parts(session: Session, elided: tuple[str, ...] = ()) -> list[Text]:
    """The cooldown line's phrases, without those `elided` (`COOLDOWN_ELISIONS`' names)."""
    c = session.cooldown
    assert c is not None
    left = clock(max(0.0, c.min_s - c.elapsed_s))
    cap_left = clock(max(0.0, c.cap_s - c.elapsed_s))
    now = Text.assemble("now ", thermal_text(c.thermal))
    if "basis" not in elided:
        now.append(f" ({c.basis})")
    return [
        Text.assemble(("cooling ", "bold cyan"), clock(c.elapsed_s)),
        Text(f"min {clock(c.min_s)}" + ("" if "min left" in elided else f" ({left} left)")),
        Text.assemble("until ", (c.until, "bold")),
        now,
        Text(f"cap {clock(c.cap_s)}" + ("" if "cap left" in elided else f" ({cap_left} left)")),
    ]


class StatusLine(Static):
    """One or two lines at the top; the text is built from data, never parsed as markup."""

    DEFAULT_CSS = "StatusLine { height: auto; min-height: 2; padding: 0 1; background: $boost; }"
    """Two lines from the start: a session's first records (the arm's name, the battery's
    state) take the status past one line at 120 columns, which would move every panel below
    it down a row and paint every chart again (~0.1 s) just as the data comes. And it keeps
    the most lines it has taken at its width (`show`): a cooldown's line comes and goes
    between every two arms, and would move every panel twice each time."""

    def __init__(
        self,
        title: str,
        *,
        tag: str | None = None,
        reads_power: bool | None = None,
        status_note: Callable[[], str | None] = lambda: None,
        held: Callable[[], bool] = lambda: False,
        id: str | None = None,  # noqa: A002 (Textual)
    ) -> None:
        super().__init__(id=id)
        self.tooltip = POWER_HELP
        self.feed_title = title
        self.tag = tag
        self.reads_power = reads_power
        self.status_note = status_note
        """The feed's own word on its state ("waiting for PATH"), read at every draw."""
        self.held = held
        """The run's queue is held (`p`), as its controls say; read at every draw."""
        self.note: str | None = None
        """The app's last word on the run (`status_text`'s `note`)."""
        self.drawn: tuple[object, ...] | None = None
        self.packed_at = 0
        """The width the last text's parts were packed into lines for."""
        self.session: Session | None = None

    def show(self, session: Session) -> None:
        waiting, held = self.status_note(), self.held()
        key = (id(session), session.version, held, self.note, waiting)
        if key != self.drawn:
            self.drawn, self.session = key, session
            width = self.content_size.width
            text = status_text(session, self.feed_title, self.tag, width or None,
                               self.reads_power, held=held, note=self.note,
                               waiting=waiting)  # fmt: skip
            steady.update(self, text)  # new watts every second, mostly on as many lines
            lines = text.plain.count("\n") + 1  # as packed (a part longer than a line wraps)
            if width and lines > steady.least_rows(self):
                self.styles.min_height = lines  # never fewer at this width (DEFAULT_CSS)
            self.packed_at = width

    def on_resize(self) -> None:
        """A new width: the parts are packed again at once (a paused replay sends no data),
        into as few lines as they take there."""
        if self.session is not None and self.packed_at != self.content_size.width:
            self.styles.min_height = None  # back to DEFAULT_CSS's
            self.drawn = None
            self.show(self.session)
