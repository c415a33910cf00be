"""The log panel's rows: a line longer than the panel says so at the edge."""

from __future__ import annotations

import pytest
from rich.console import RenderableType
from rich.text import Text
from textual.app import App, ComposeResult
from textual.scrollbar import ScrollBar

from anemon.events import StartEvent, TrialEvent
from anemon.store import Session
from anemon.ui.log_panel import ErrorHighlighter, LogPanel

LONG = "TRIAL arm=a trial=80 warmup=0 t=603.88 prompt_tps=1125.9 decode_tps=32.9 gen=256"


class OneLog(App[None]):
    def compose(self) -> ComposeResult:
        yield LogPanel()


def trial(t: int, line: str = LONG) -> TrialEvent:
    return TrialEvent(t=t, wall=t, arm="a", trial=t, decode_tps=50.0, gen=100, line=line)


def row(log: LogPanel, y: int) -> str:
    return "".join(segment.text for segment in log.render_line(y))


async def test_a_line_cut_by_the_right_edge_ends_in_an_ellipsis() -> None:
    app = OneLog()
    async with app.run_test(size=(40, 8)) as pilot:
        log = app.query_one(LogPanel)
        log.write_lines(["short line", LONG, *(f"line {i}" for i in range(20))])
        log.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        width = log.scrollable_content_region.width  # left of the vertical scrollbar
        assert width < log.size.width
        assert row(log, 0).rstrip() == "short line"
        assert row(log, 1)[:width] == LONG[: width - 1] + "…"
        log.scroll_to(x=log.max_scroll_x, animate=False, immediate=True)
        await pilot.pause()
        assert row(log, 1).rstrip().endswith("gen=256")  # scrolled to its end: nothing cut


async def test_a_line_that_keeps_the_width_leaves_the_horizontal_scrollbar_as_drawn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 26, item 2: each line redrew the log's horizontal scrollbar (Textual redraws
    both bars on any change of the virtual size); a line no wider than the widest redraws
    the vertical one alone, a wider line both."""
    drawn: list[str] = []
    render = ScrollBar.render

    def counted(bar: ScrollBar) -> RenderableType:
        drawn.append("vertical" if bar.vertical else "horizontal")
        return render(bar)

    monkeypatch.setattr(ScrollBar, "render", counted)
    app = OneLog()
    async with app.run_test(size=(40, 8)) as pilot:
        log = app.query_one(LogPanel)
        session = Session.from_events([StartEvent(t=0, wall=0, arm="a"),
                                       *(trial(t) for t in range(1, 20))])  # fmt: skip
        log.show(session)
        await pilot.pause()
        assert log.show_horizontal_scrollbar and log.show_vertical_scrollbar
        drawn.clear()
        session.add(trial(20))
        log.show(session)
        await pilot.pause()
        assert drawn == ["vertical"]
        drawn.clear()
        session.add(trial(21, LONG + " prefill_ms=310.2"))
        log.show(session)
        await pilot.pause()
        assert sorted(drawn) == ["horizontal", "vertical"]


async def test_a_write_measures_its_lines_on_the_loop_not_in_a_thread() -> None:
    """Issue 26, item 2: Textual's Log measured each write's lines in a thread worker (a
    thread, its messages and a call back per trial); the panel's width is known as soon as
    it writes, with no worker."""
    app = OneLog()
    async with app.run_test(size=(40, 8)) as pilot:
        log = app.query_one(LogPanel)
        session = Session.from_events([StartEvent(t=0, wall=0, arm="a"), trial(1)])
        log.show(session)
        assert log.virtual_size.width == len(LONG)
        assert not list(app.workers)
        await pilot.pause()
        assert log.virtual_size.width == len(LONG)


async def test_a_new_line_is_the_only_one_made_again_when_the_log_moves_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every row on screen is rendered at each move of the log (a live trial's line, a seek);
    the lines already made are taken from the log's cache, not parsed and highlighted again."""
    highlighted: list[str] = []
    highlight = ErrorHighlighter.highlight

    def counted(self: ErrorHighlighter, text: Text) -> None:
        highlighted.append(text.plain)
        highlight(self, text)

    monkeypatch.setattr(ErrorHighlighter, "highlight", counted)
    app = OneLog()
    async with app.run_test(size=(60, 8)) as pilot:
        log = app.query_one(LogPanel)
        log.write_lines([f"line {i}" for i in range(20)])
        await pilot.pause()
        assert highlighted and set(highlighted) <= {f"line {i}" for i in range(20)}
        highlighted.clear()
        log.write_line("ERROR: the new one")
        await pilot.pause()
        assert highlighted == ["ERROR: the new one"]
        assert "ERROR: the new one" in row(log, log.scrollable_content_region.height - 1)
