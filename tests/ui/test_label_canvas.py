"""The charts' canvases write text as textual-hires-canvas does, parsing each text once: a
live trial's redraw no longer parses its ~70 unchanged axis labels again."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from rich.text import Text
from textual.app import App, ComposeResult
from textual.geometry import Region, Size
from textual_hires_canvas import Canvas, TextAlign

from anemon.store import Session
from anemon.ui.charts import plotlib
from anemon.ui.charts.chart import Chart
from anemon.ui.charts.specs import CHARTS
from tests.ui.helpers import live_feed

TEXTS = ("12:30", "a", "ab", "[bold]1.5k[/bold]", "[#a0a0a0 on #101010]tok/s", "[red]x[/red]y")


class Two(App[None]):
    def compose(self) -> ComposeResult:
        yield Canvas(12, 3, id="theirs")
        yield plotlib.LabelCanvas(12, 3, id="ours")


@pytest.mark.parametrize("align", list(TextAlign))
async def test_a_label_canvas_writes_the_cells_textual_hires_canvas_writes(
    align: TextAlign,
) -> None:
    app = Two()
    async with app.run_test(size=(20, 10)):
        theirs = app.query_one("#theirs", Canvas)
        ours = app.query_one("#ours", plotlib.LabelCanvas)
        for canvas in (theirs, ours):
            canvas.reset(size=Size(12, 3))
        for text, x, y in itertools.product(TEXTS, range(-8, 16, 3), (-1, 0, 2, 3)):
            theirs.write_text(x, y, text, align)
            ours.write_text(x, y, text, align)
            assert plotlib.canvas_rows(ours) == plotlib.canvas_rows(theirs), (text, x, y)


async def test_a_label_canvas_renders_the_lines_textual_hires_canvas_renders() -> None:
    app = Two()
    async with app.run_test(size=(20, 10)) as pilot:
        theirs = app.query_one("#theirs", Canvas)
        ours = app.query_one("#ours", plotlib.LabelCanvas)
        for canvas in (theirs, ours):
            canvas.reset(size=Size(12, 3))
            for y, text in enumerate(TEXTS[3:]):
                canvas.write_text(0, y, text)
        for background in ("#203040", "#000000"):  # an ancestor's style changes between renders
            app.screen.styles.background = background
            await pilot.pause()
            lines = [canvas.render_lines(Region(0, 0, 12, 3)) for canvas in (theirs, ours)]
            assert lines[0] == lines[1], background
            assert ours.rich_style == theirs.rich_style


class OneChart(App[None]):
    def compose(self) -> ComposeResult:
        yield Chart(CHARTS["decode"], id="decode")


async def test_a_chart_drawn_again_with_the_same_axes_parses_no_label_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    feed = live_feed()
    session: Session = feed.session
    from anemon.events import StartEvent, TrialEvent

    session.add(StartEvent(t=0, wall=0, arm="a"))
    for i in range(50):
        session.add(TrialEvent(t=1 + i, wall=1 + i, arm="a", trial=i, decode_tps=50.0 + i % 5))
    app = OneChart()
    async with app.run_test(size=(80, 20)) as pilot:
        chart = app.query_one(Chart)
        await pilot.pause()
        assert chart.draw(session)
        await pilot.pause()
        parses: list[str] = []
        markup = Text.from_markup

        def counted(text: str, **kwargs: object) -> Text:
            parses.append(text)
            return markup(text, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(Text, "from_markup", counted)
        chart.drawn = None  # drawn again: the same points, the same ticks and labels
        chart._picture = None  # painted, not skipped as the same picture
        assert chart.draw(session)
        # what is parsed still is the legend's (a Static of textual-plot's, not a canvas)
        assert [text for text in parses if text and "⠒" not in text] == []
        assert np.any([row != [" "] * len(row) for row in plotlib.canvas_rows(
            chart.query_one("#margin-bottom", Canvas))[0]])  # fmt: skip
