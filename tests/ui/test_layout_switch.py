"""A layout switched to live (`l`) styles and places every widget exactly as the same layout
chosen at start, although only the widgets its rules match are restyled (`layouts.swap`)."""

from __future__ import annotations

from pathlib import Path

from textual.dom import DOMNode
from textual.pilot import Pilot
from textual.widget import Widget
from textual_plot import PlotWidget

from anemon.feeds.runs import Runs
from anemon.ui import layouts
from anemon.ui.app import Dashboard

from .sample import replay_feed

SIZE = (120, 40)


def looks(app: Dashboard) -> list[tuple[object, ...]]:
    """Every node's type, id, styles from the CSS and, for widgets, where it is on the
    screen and the colours it is drawn in (taken from its ancestors too). The toasts (the
    layout's name) are left out: a fresh app has none."""
    return [
        (
            type(node).__name__,
            node.id,
            css_rules(node),
            (shown_region(node), colours(node)) if isinstance(node, Widget) else None,
        )
        for node in app.screen.walk_children(with_self=True)
        if not any(type(n).__name__.startswith("Toast") for n in ancestors(node))
    ]


def shown_region(widget: Widget) -> object:
    """Where `widget` is on the screen; None for one not displayed, whose region is what it
    was when last shown (a legend hidden a moment after it was placed), not what it shows."""
    return widget.region if all(n.display for n in widget.ancestors_with_self) else None


def colours(widget: Widget) -> object:
    """The colours `widget` is drawn in. None for a plot: textual-plot's PlotWidget drops
    Textual's `notify_style_update` (it does not call super), so its cached colours are
    stale after any restyle, Textual's own `refresh_css` included."""
    return None if isinstance(widget, PlotWidget) else widget.visual_style


def css_rules(node: DOMNode) -> dict[str, object]:
    """The rules the stylesheet gave `node` (not those a widget sets on itself); a layout
    object by its name (each app has its own)."""
    rules: dict[str, object] = dict(node.styles.base.get_rules())
    if "layout" in rules:
        rules["layout"] = getattr(rules["layout"], "name", rules["layout"])
    return rules


def ancestors(node: DOMNode) -> list[DOMNode]:
    return list(node.ancestors_with_self)


async def settled(app: Dashboard, pilot: Pilot[None]) -> list[tuple[object, ...]]:
    """`looks` once the screen has stopped changing: a chart's draw after its Resized comes
    a refresh later, and under load that can be a pause later than on a quiet machine (a
    legend placed at the new size), so one pause is not a settled screen."""
    before = looks(app)
    for _ in range(10):
        await pilot.pause()
        now = looks(app)
        if now == before:
            return now
        before = now
    return before


async def fresh(layout: Path, tmp_path: Path) -> list[tuple[object, ...]]:
    app = Dashboard(Runs.one(replay_feed(markers_dir=tmp_path)), layout, save_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        return await settled(app, pilot)


async def test_each_layout_switched_to_looks_as_when_chosen_at_start(tmp_path: Path) -> None:
    expected = {path: await fresh(path, tmp_path) for path in layouts.choices(layouts.DEFAULT)}
    app = Dashboard(Runs.one(replay_feed(markers_dir=tmp_path)), layouts.DEFAULT, save_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        seen = []
        for _ in range(len(app.layouts) + 1):  # round the cycle, back to the default, and on
            await pilot.press("l")
            await pilot.pause()
            seen.append(app.layout_path)
            assert await settled(app, pilot) == expected[app.layout_path], app.layout_path.stem
    assert {path.stem for path in seen} == set(layouts.BUILTIN)


async def test_a_user_layout_colouring_a_container_restyles_what_is_inside(
    tmp_path: Path,
) -> None:
    """A rule beyond placement (a colour) may reach descendants: they are restyled too, on the
    way in and on the way out."""
    mine = tmp_path / "mine.tcss"
    mine.write_text("#body { background: red; color: yellow; }\n#log { height: 4; }\n")
    expected_mine = await fresh(mine, tmp_path)
    expected_default = await fresh(layouts.DEFAULT, tmp_path)
    app = Dashboard(Runs.one(replay_feed(markers_dir=tmp_path)), layouts.DEFAULT, save_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.use_layout(mine, say=False)
        await pilot.pause()
        assert await settled(app, pilot) == expected_mine
        app.use_layout(layouts.DEFAULT, say=False)
        await pilot.pause()
        assert await settled(app, pilot) == expected_default


async def test_a_switch_restyles_only_the_widgets_the_layouts_name(tmp_path: Path) -> None:
    app = Dashboard(Runs.one(replay_feed(markers_dir=tmp_path)), layouts.DEFAULT, save_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        everything = sum(1 for _ in app.walk_children(with_self=True))
        restyled = layouts.swap(app, layouts.DEFAULT, layouts.COMPACT)
        assert 0 < restyled < everything / 3


async def test_a_layout_file_that_does_not_parse_is_said_and_left_out(tmp_path: Path) -> None:
    """Only --layout is checked at start; a broken file met by `l` must not end the app."""
    bad = tmp_path / "bad.tcss"
    bad.write_text("#charts { colr: red; }\n")
    app = Dashboard(Runs.one(replay_feed(markers_dir=tmp_path)), layouts.DEFAULT, save_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        before = looks(app)
        app.use_layout(bad)
        await pilot.pause()
        assert app.layout_path == layouts.DEFAULT and looks(app) == before
        assert [n.message for n in app._notifications][-1].startswith("layout bad.tcss not used")
        app.use_layout(layouts.COMPACT, say=False)  # the stylesheet still works
        await pilot.pause()
        assert app.layout_path == layouts.COMPACT and not app.query_one("#charts").display


async def test_charts_a_grown_terminal_shows_are_drawn_though_the_replay_has_ended(
    tmp_path: Path,
) -> None:
    """Started small (compact: no charts), the ended replay sends no more data; grown to
    200x60, the default layout's charts are drawn at their size, not left empty."""
    from anemon.ui.charts.chart import Chart

    feed = replay_feed(markers_dir=tmp_path)
    app = Dashboard(Runs.one(feed), layouts.DEFAULT, save_dir=tmp_path, chosen=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.layout_path == layouts.resolve("compact")
        await pilot.resize_terminal(200, 60)
        for _ in range(3):  # the layout's refresh, the charts' Resized, their draw
            await pilot.pause()
        decode = app.query_one("#decode", Chart)
        assert app.layout_path == layouts.DEFAULT and decode.region.area
        assert decode._datasets and decode._y_max > 1.0
