"""The replay timeline: state, speed, position / duration, and a bar with arm starts and errors."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from anemon.feeds import ReplayControls
from anemon.store import Session
from anemon.ui.series import bar, clock, speed_text


def marks(session: Session, start: float) -> dict[float, str]:
    """Where arms started (┃) and errors happened (✗), in seconds into the recording."""
    found: dict[float, str] = {}
    for arm in session.arms.values():
        if arm.start is not None:
            found[arm.start.t - start] = "┃"
    for error in session.errors:
        found[error.t - start] = "✗"
    return found


def timeline_text(replay: ReplayControls, width: int) -> Text:
    if replay.paused:
        state = "⏸ paused"
    elif replay.finished:
        state = "■ end"
    else:
        state = "▶ playing"
    where = f"{clock(replay.position)} / {clock(replay.duration)}"
    head = f"{state} {speed_text(replay.speed)}  {where}  "
    found = marks(replay.session, replay.start)
    line = bar(width - len(head), replay.position, replay.duration, found)
    return Text.assemble((head, "bold"), (line, "cyan"))


class Timeline(Static):
    """Shown for a replay only; redrawn on the replay timer when its text changes."""

    DEFAULT_CSS = "Timeline { height: 1; padding: 0 1; }"

    def __init__(self, replay: ReplayControls | None, *, id: str | None = None) -> None:  # noqa: A002 (Textual)
        super().__init__(id=id)
        self.replay = replay
        self.display = replay is not None
        self.shown: str | None = None

    def show(self) -> None:
        if self.replay is None:
            return
        text = timeline_text(self.replay, max(self.content_size.width, 20))
        if text.plain != self.shown:
            self.shown = text.plain
            self.update(text)
