"""`replay --overlay`: the reference arms matched, placed by arm elapsed time, drawn dimmed
under the charts, toggled with `o`, and compared in the arms table (pilot, fixed data)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from rich.text import Text

from anemon.events import Event, StartEvent, TrialEvent
from anemon.feeds.runs import Runs
from anemon.store import Session
from anemon.ui import layouts
from anemon.ui.app import Dashboard
from anemon.ui.arms_table import VS_REF, ArmsTable
from anemon.ui.charts.chart import Chart
from anemon.ui.charts.specs import arm_colour, dimmed
from anemon.ui.overlay import Overlay, arm_points, decode_mean, match_arms, series_points

from .sample import ARMS, replay_feed, sustained

SIZE = (120, 40)
ANE, GPU = (name for name, *_ in ARMS)


def slower(events: list[Event], factor: float) -> list[Event]:
    """The same session with every decode rate times `factor`."""
    return [
        replace(e, decode_tps=e.decode_tps * factor)
        if isinstance(e, TrialEvent) and e.decode_tps is not None
        else e
        for e in events
    ]


def reference(events: list[Event], name: str = "runs/ref.jsonl") -> Overlay:
    return Overlay.of(name, Session.from_events(events))


def dashboard(tmp_path: Path, overlay: Overlay | None, layout: str = "default") -> Dashboard:
    feed = replay_feed(markers_dir=tmp_path)
    return Dashboard(Runs.one(feed), layouts.resolve(layout), save_dir=tmp_path, overlay=overlay)


# -- matching -------------------------------------------------------------------------------


def test_arms_match_by_name_first_then_by_compute_each_reference_once():
    source = {"a": "ane", "b": "gpu", "c": "gpu", "d": None}
    other = {"x": "gpu", "b": "ane", "y": "gpu", "z": "gpu"}
    # b by name (whatever its compute); c, the first GPU arm left, gets x; a (ane) finds no
    # ane left (b taken); d says no compute
    assert match_arms(source, other) == {"b": "b", "c": "x"}


def test_two_arms_of_one_compute_pair_in_order():
    assert match_arms({"g1": "gpu", "g2": "gpu"}, {"r1": "gpu", "r2": "gpu"}) == {
        "g1": "r1",
        "g2": "r2",
    }


# -- placing --------------------------------------------------------------------------------


def one_arm(arm: str, compute: str, start: float, trials: list[tuple[float, float]]) -> list[Event]:
    """A START at `start`, then TRIALs at (t, decode); the first is a warm-up."""
    events: list[Event] = [StartEvent(t=start, wall=start, arm=arm, compute=compute, line="")]
    for k, (t, decode) in enumerate(trials):
        events.append(TrialEvent(t=t, wall=t, arm=arm, trial=k, warmup=k == 0,
                                 decode_tps=decode, thermal=k % 4, line=""))  # fmt: skip
    return events


def test_reference_points_start_where_the_source_arm_starts():
    # SOURCE: session from t=10, its GPU arm's first trial at t=100; the reference's GPU arm
    # (another name) has its first trial at t=500: trial at 530 lands 30 s after SOURCE's
    source = Session.from_events(
        one_arm("mine", "gpu", 10.0, [(100.0, 1.0), (110.0, 2.0), (140.0, 3.0), (400.0, 4.0)])
    )
    other = reference(one_arm("theirs", "gpu", 490.0, [(500.0, 9.0), (510.0, 8.0), (530.0, 7.0)]))
    [(arm, x, y)] = arm_points(other, source, "decode_tps")
    assert arm == "mine"
    # SOURCE's x is seconds since its first event (t=10): 100 - 10 = 90 is the arm's start
    assert x.tolist() == [90.0 + 10.0, 90.0 + 30.0]  # the warm-up left out, as in the charts
    assert y.tolist() == [8.0, 7.0]


def test_reference_points_never_run_ahead_of_the_replay():
    source = Session.from_events(one_arm("a", "gpu", 0.0, [(0.0, 1.0), (20.0, 1.0)]))
    other = reference(one_arm("a", "gpu", 0.0, [(0.0, 5.0), (10.0, 5.0), (20.0, 5.0), (90.0, 5.0)]))
    [(_, x, _)] = arm_points(other, source, "decode_tps")
    assert x.tolist() == [10.0, 20.0]  # not 90: the replay is 20 s in
    [(_, tx, ty)] = series_points(other, source, "thermal", step=True)
    assert tx.max() <= 20.0
    assert ty.tolist()[:2] == [0.0, 0.0]  # thermal 0 at the reference's first trial


def test_a_source_arm_not_yet_started_has_no_reference():
    source = Session.from_events(one_arm("a", "ane", 0.0, [(1.0, 1.0), (5.0, 1.0)]))
    other = reference(
        one_arm("a", "ane", 0.0, [(0.0, 2.0), (3.0, 2.0)])
        + one_arm("b", "gpu", 10.0, [(11.0, 2.0), (14.0, 2.0)])
    )
    assert [arm for arm, _, _ in arm_points(other, source, "decode_tps")] == ["a"]


# -- the dashboard --------------------------------------------------------------------------


def ref_labels(chart: Chart) -> list[str]:
    return [label for label in chart._labels if label and label.startswith("ref ")]


async def test_reference_curves_are_drawn_dimmed_and_o_toggles_them(tmp_path: Path):
    app = dashboard(tmp_path, reference(slower(sustained(), 0.8)))
    async with app.run_test(size=SIZE) as pilot:
        app.redraw(force=True)
        await pilot.pause()
        decode = app.query_one("#decode", Chart)
        assert ref_labels(decode) == [f"ref {ANE}", f"ref {GPU}"]
        # textual-plot's datasets, in the order handed over: the references first (under)
        styles = [data.line_style for data in decode._datasets]
        session = app.feed.session
        assert styles[:2] == [dimmed(arm_colour(session, ANE)), dimmed(arm_colour(session, GPU))]
        assert styles[2:] == [arm_colour(session, ANE), arm_colour(session, GPU)]
        assert "ref: ref.jsonl" in str(decode.border_title)
        for name in ("prefill", "thermal", "power"):
            assert ref_labels(app.query_one(f"#{name}", Chart)), name

        await pilot.press("o")
        await pilot.pause()
        assert ref_labels(decode) == []
        assert "ref:" not in str(decode.border_title)
        assert len(decode._datasets) == 2

        await pilot.press("o")
        await pilot.pause()
        assert ref_labels(decode) == [f"ref {ANE}", f"ref {GPU}"]


async def test_the_reference_is_not_in_a_short_charts_text_form(tmp_path: Path):
    app = dashboard(tmp_path, reference(slower(sustained(), 0.5)), layout="compact")
    async with app.run_test(size=(80, 24)) as pilot:
        app.redraw(force=True)
        await pilot.pause()
        for chart in app.query(Chart):
            assert all(label is None or not label.startswith("ref") for _, label, _ in chart.latest)


async def test_the_arms_table_shows_the_decode_change_against_the_reference(tmp_path: Path):
    app = dashboard(tmp_path, reference(slower(sustained(), 0.8)))
    async with app.run_test(size=SIZE) as pilot:
        app.redraw(force=True)
        await pilot.pause()
        table = app.query_one("#arms", ArmsTable)
        assert table.picked[-1] == VS_REF and "tokens" not in table.picked  # the same width
        cells = [table.get_cell(arm, VS_REF) for arm in (ANE, GPU)]
        # every decode rate of the reference is 0.8 of the replayed one's: +25 %
        assert [str(c) if isinstance(c, Text) else c for c in cells] == ["+25.0 %", "+25.0 %"]


async def test_without_an_overlay_there_is_no_key_no_column_no_reference(tmp_path: Path):
    app = dashboard(tmp_path, None)
    async with app.run_test(size=SIZE) as pilot:
        app.redraw(force=True)
        await pilot.pause()
        assert app.check_action("toggle_overlay", ()) is False
        assert VS_REF not in app.query_one("#arms", ArmsTable).picked
        assert ref_labels(app.query_one("#decode", Chart)) == []


@pytest.mark.parametrize("layout", ["ab"])
async def test_the_side_by_side_charts_have_their_arms_reference(tmp_path: Path, layout: str):
    app = dashboard(tmp_path, reference(slower(sustained(), 0.8)), layout=layout)
    async with app.run_test(size=SIZE) as pilot:
        app.redraw(force=True)
        await pilot.pause()
        assert ref_labels(app.query_one("#arm-a", Chart)) == [f"ref {ANE}"]
        assert ref_labels(app.query_one("#arm-b", Chart)) == [f"ref {GPU}"]
        ys = [np.asarray(d.y) for d in app.query_one("#arm-a", Chart)._datasets]
        assert ys[0].max() < ys[1].max()  # the reference is the slower one


def test_vs_ref_compares_the_same_arm_elapsed_time():
    # the replayed arm is 20 s into its run at 10 tok/s; the reference decoded 20 tok/s in
    # its first 20 s and 5 tok/s after: the burst is compared with the reference's burst
    source = Session.from_events(one_arm("a", "gpu", 0.0, [(0.0, 1.0), (10.0, 10.0), (20.0, 10.0)]))
    other = reference(one_arm("a", "gpu", 100.0, [(100.0, 1.0), (110.0, 20.0), (120.0, 20.0),
                                                   (130.0, 5.0), (140.0, 5.0)]))  # fmt: skip
    assert decode_mean(other, source, "a") == 20.0
    assert decode_mean(other, source, "b") is None
