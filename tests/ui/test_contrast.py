"""Every title, label and unit at a contrast of at least 4.5:1 (WCAG AA) against what it is
drawn on, in every built-in layout: computed from the colours the App's theme resolves its CSS
variables to, which the terminal and the browser (textual-serve) both show."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.color import Color
from textual.widget import Widget
from textual_hires_canvas import Canvas

from anemon.ui import layouts
from anemon.ui.charts.chart import Chart
from anemon.ui.charts.specs import CHARTS

from .helpers import MakeApp
from .sample import replay_feed, sustained
from .test_snapshots import SIZES, draw_now

AA = 4.5


def luminance(colour: Color) -> float:
    """WCAG 2's relative luminance of an opaque colour."""

    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = colour.rgb
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(text: Color, background: Color) -> float:
    """The WCAG contrast ratio of `text` (blended onto `background`, as a terminal shows a
    translucent colour) against `background`."""
    light, dark = sorted((luminance(background + text), luminance(background)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_contrast_is_the_wcag_ratio() -> None:
    assert contrast(Color(255, 255, 255), Color(0, 0, 0)) == pytest.approx(21.0)
    assert contrast(Color(0x77, 0x77, 0x77), Color(255, 255, 255)) == pytest.approx(4.48, 0.01)


def texts(widget: Widget) -> dict[str, Color]:
    """What `widget` writes in words, by name, with its colour: its text, its border's title
    and subtitle (Textual draws them in the border's colour unless told), a chart's tick
    labels and unit."""
    styles = widget.styles
    found = {"text": widget.colors[3]}
    if widget.border_title is not None:
        found["title"] = (
            styles.border_title_color if styles.border_title_color.a else (styles.border_top[1])
        )
    if widget.border_subtitle is not None:
        found["subtitle"] = (
            styles.border_subtitle_color
            if styles.border_subtitle_color.a
            else (styles.border_bottom[1])
        )
    if isinstance(widget, Chart):
        found["tick labels"] = widget.get_component_styles("plot--tick").color
        found["unit"] = widget.get_component_styles("plot--label").color
    return found


@pytest.mark.parametrize("layout", layouts.BUILTIN)
async def test_every_title_label_and_unit_is_legible(layout: str, make_app: MakeApp) -> None:
    app = make_app(layout)
    async with app.run_test(size=SIZES[layout]) as pilot:
        await draw_now(pilot)
        shown = [w for w in app.screen.walk_children(Widget) if w.display and w.region.area]
        low = [
            f"{widget.__class__.__name__}#{widget.id} {name}: {ratio:.2f}"
            for widget in shown
            for name, colour in texts(widget).items()
            if (ratio := contrast(colour, widget.background_colors[1])) < AA
        ]
        assert not low, f"below {AA}:1 in {layout}: {low}"
        assert any(isinstance(w, Chart) or w.id == "strips" for w in shown)


@pytest.mark.parametrize("layout", ["default", "wall", "ab"])
async def test_each_chart_has_its_unit_beside_its_value_axis(
    layout: str, make_app: MakeApp, tmp_path: Path
) -> None:
    app = make_app(layout, replay_feed(sustained(process=True), markers_dir=tmp_path))
    async with app.run_test(size=SIZES[layout]) as pilot:
        await draw_now(pilot)
        charts = [c for c in app.query(Chart) if c.display and c.region.area and not c.short]
        assert charts
        for chart in (c for c in charts if c.spec.unit):
            margin = chart.query_one("#margin-left", Canvas)
            top = "".join(margin.get_pixel(x, 0)[0] for x in range(margin.size.width))
            assert top.strip() == chart.spec.unit, chart.id
    # the thermal axis names its states; the process charts say GB and % in their titles only
    # (their top tick can land on the unit's row: an open item of issue 24)
    assert {name for name, spec in CHARTS.items() if not spec.unit} == {"thermal", "memory", "gpu"}
