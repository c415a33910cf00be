"""The compact layout's strips: a decode strip per arm, each with its own name, figure and
scale; never one sparkline of every arm under the current one's name."""

from __future__ import annotations

import pytest
from textual.widgets import Label

from anemon.events import TrialEvent
from anemon.ui.app import Dashboard
from anemon.ui.charts.strips import Strip

from .helpers import MakeApp, live_feed

ANE = [55.0, 56.0, 52.0, 54.0]
GPU = [13.0, 14.0, 13.5]


def screen_rows(app: Dashboard, strip: Strip) -> list[str]:
    """What the terminal shows in `strip`'s region."""
    lines = app.screen._compositor.render_strips()
    region = strip.region
    return ["".join(seg.text for seg in lines[y])[region.x : region.right].rstrip()
            for y in range(region.y, region.bottom)]  # fmt: skip


async def decode_strips(make_app: MakeApp, feed: object) -> list[list[str]]:
    """The two decode strips' rows, drawn at 80x24 in the compact layout."""
    app = make_app("compact", feed=feed)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.redraw(force=True)
        await pilot.pause()
        return [screen_rows(app, app.query_one(f"#strip-decode-{i}", Strip)) for i in (0, 1)]


async def test_each_arm_has_its_own_strip_with_its_own_figure_and_scale(
    make_app: MakeApp,
) -> None:
    """An A/B pair, the GPU arm current: the ANE arm's strip says its own name, latest figure
    and range; the GPU arm's its own (a warm-up left out of both)."""
    feed = live_feed()
    t = 0.0
    for arm, rates in (("minicpm5_2b_ane", ANE), ("minicpm5_2b_gpu_int8", GPU)):
        for trial, rate in enumerate([99.0, *rates]):
            t += 1
            feed.pipeline.emit(TrialEvent(t=t, wall=t, arm=arm, trial=trial,
                                          warmup=trial == 0, decode_tps=rate))  # fmt: skip
    ane, gpu = await decode_strips(make_app, feed)
    assert ane[0].startswith("minicpm5_2b_ane ") and ane[1].startswith("decode 54.0 tok/s ")
    assert ane[0].endswith(" 52.0–56.0") and ane[1].endswith(" tok/s")
    assert gpu[0].startswith("minicpm5_2b_gpu_int8 ") and gpu[1].startswith("decode 13.5 tok/s ")
    assert gpu[0].endswith(" 13.0–14.0") and gpu[1].endswith(" tok/s")


async def test_one_arm_leaves_the_second_strip_without_a_row_and_a_figure_lays_nothing_out(
    make_app: MakeApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One arm: the second decode strip takes no row. A live trial changes each strip's
    figure, not its size: the strips' labels are set without a layout of the screen, and show
    the new figure; the second arm's strip, whose labels gain their lines, is laid out."""
    feed = live_feed()
    feed.pipeline.emit(TrialEvent(t=1.0, wall=1.0, arm="a", trial=1, decode_tps=50.0))
    app = make_app("compact", feed=feed)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.redraw(force=True)
        await pilot.pause()
        assert app.query_one("#strip-decode-0", Strip).region.height == 2
        assert app.query_one("#strip-decode-1", Strip).region.height == 0
        layouts: list[bool] = []
        for label in app.query("Strip Label").results(Label):
            update = label.update
            monkeypatch.setattr(label, "update", lambda text, layout=True, u=update:
                                layouts.append(layout) or u(text, layout=layout))  # fmt: skip
        feed.pipeline.emit(TrialEvent(t=2.0, wall=2.0, arm="a", trial=2, decode_tps=53.5))
        app.redraw(force=True)
        await pilot.pause()
        assert layouts and not any(layouts)
        rows = screen_rows(app, app.query_one("#strip-decode-0", Strip))
        assert rows[1].startswith("decode 53.5 tok/s ") and rows[0].endswith(" 50.0–53.5")
        layouts.clear()
        feed.pipeline.emit(TrialEvent(t=3.0, wall=3.0, arm="b", trial=1, decode_tps=13.0))
        app.redraw(force=True)
        await pilot.pause()
        assert True in layouts  # the second arm's strip: from no text to two lines
        assert app.query_one("#strip-decode-1", Strip).region.height == 2
