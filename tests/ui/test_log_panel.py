"""The log panel's rows: a line longer than the panel says so at the edge."""

from __future__ import annotations

from textual.app import App, ComposeResult

from anemon.ui.log_panel import LogPanel

LONG = "TRIAL arm=a trial=80 warmup=0 t=603.88 prompt_tps=1125.9 decode_tps=32.9 gen=256"


class OneLog(App[None]):
    def compose(self) -> ComposeResult:
        yield LogPanel()


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
