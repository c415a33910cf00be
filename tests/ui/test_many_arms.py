"""A log of thousands of one-trial arms (issue 21): the charts and the arms table show the
latest SHOWN_ARMS arms and say how many they leave out, so their work per redraw is theirs,
not the log's, and the dashboard keeps answering its keys."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import pytest
from textual.app import App, ComposeResult

from anemon.feeds.replay import ReplayFeed
from anemon.feeds.runs import Runs
from anemon.recording.reader import open_source
from anemon.ui import arms_table, layouts
from anemon.ui.app import Dashboard
from anemon.ui.arms_table import ArmsTable
from anemon.ui.charts.specs import CHARTS, PALETTE, arm_colour
from anemon.ui.series import SHOWN_ARMS

from ..many_arms import arm_name, many_arms_session, write_many_arms

HANG_GUARD_S = 120.0
"""Only so that a dashboard that stops answering fails the test instead of hanging it."""


class OneTable(App[None]):
    def compose(self) -> ComposeResult:
        yield ArmsTable(id="arms")


@pytest.mark.parametrize("arms", [SHOWN_ARMS + 150, SHOWN_ARMS + 450])
async def test_the_arms_table_summarizes_and_lays_out_the_latest_arms_only(
    arms: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As many summaries and one layout per show, however many arms the log has: the same
    counts for 200 and 500 arms (it was a summary per arm and a layout per row, each reading
    every row)."""
    session = many_arms_session(arms, tmp_path / "arms.log")
    calls = {"summarize_arm": 0, "fit": 0}
    summarize_arm, fit = arms_table.summarize_arm, ArmsTable.fit

    def counted_summary(*args: object, **kwargs: object) -> object:
        calls["summarize_arm"] += 1
        return summarize_arm(*args, **kwargs)  # type: ignore[arg-type]

    def counted_fit(table: ArmsTable) -> tuple[str, ...]:
        calls["fit"] += 1
        return fit(table)

    monkeypatch.setattr(arms_table, "summarize_arm", counted_summary)
    monkeypatch.setattr(ArmsTable, "fit", counted_fit)
    async with OneTable().run_test(size=(120, 40)) as pilot:
        table = pilot.app.query_one(ArmsTable)
        await pilot.pause()
        calls["fit"] = 0  # the mount's and the resize's
        table.show(session)
        assert calls == {"summarize_arm": SHOWN_ARMS, "fit": 1}
        assert table.row_count == SHOWN_ARMS + 1  # and the row saying how many are not
        first = [cell.plain for cell in table.get_row_at(0)]
        assert first[0] == f"{arms - SHOWN_ARMS} earlier arms not shown"
        listed = [str(table.get_row_at(i)[0]) for i in range(1, table.row_count)]
        assert listed == [arm_name(i) for i in range(arms - SHOWN_ARMS, arms)]


async def test_the_arms_table_of_a_few_arms_lists_them_all(tmp_path: Path) -> None:
    session = many_arms_session(3, tmp_path / "arms.log")
    async with OneTable().run_test(size=(120, 40)) as pilot:
        table = pilot.app.query_one(ArmsTable)
        await pilot.pause()
        table.show(session)
        assert [str(table.get_row_at(i)[0]) for i in range(table.row_count)] == [
            arm_name(i) for i in range(3)
        ]


def test_the_per_arm_charts_draw_the_latest_arms_and_say_how_many_they_leave_out(
    tmp_path: Path,
) -> None:
    arms = SHOWN_ARMS + 950
    session = many_arms_session(arms, tmp_path / "arms.log")
    for chart, title in (("decode", "decode tok/s"), ("prefill", "prefill tok/s")):
        spec = CHARTS[chart]
        lines = spec.lines(session)
        assert [line.label for line in lines] == [
            arm_name(i) for i in range(arms - SHOWN_ARMS, arms)
        ]
        assert spec.title(session) == f"{title} · 950 earlier arms not shown"
    assert CHARTS["decode"].title(many_arms_session(3, tmp_path / "few.log")) == "decode tok/s"
    # each arm keeps its colour, the one its place among all the arms gives it
    assert arm_colour(session, arm_name(arms - 1)) == PALETTE[(arms - 1) % len(PALETTE)]


async def test_a_replay_of_5000_one_trial_arms_answers_q(tmp_path: Path) -> None:
    """Every arm in the session and every panel drawn (a seek to the end draws them all at
    once), then `q`: the app ends. Before, the first arms table of such a log held the event
    loop for minutes (the hang guard failed it)."""
    log = write_many_arms(tmp_path / "arms.log", 5000)
    feed = ReplayFeed(list(open_source(log)), str(log), markers_dir=tmp_path, speed=math.inf)
    app = Dashboard(Runs.one(feed), layouts.resolve("default"), save_dir=tmp_path)

    async def session() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("end")
            await pilot.pause()
            assert len(feed.session.arms) == 5000
            assert app.query_one("#arms", ArmsTable).row_count == SHOWN_ARMS + 1
            await pilot.press("q")
            await pilot.pause()
            assert app.return_code == 0

    await asyncio.wait_for(session(), HANG_GUARD_S)
