"""The dashboard of several runs: a tab per device, the overview strip, keys on the selected
run, quitting asks first while any run goes on (pilot and snapshot)."""

from __future__ import annotations

import pytest
from textual.widgets import TabbedContent

from anemon.clock import RealClock
from anemon.control.plan import parse_plan
from anemon.events import PhaseEvent
from anemon.feeds.plan import PlanRun
from anemon.feeds.runs import Runs
from anemon.ui import layouts
from anemon.ui.app import Dashboard
from anemon.ui.confirm import quit_what
from anemon.ui.overview import Overview
from anemon.ui.status import StatusLine

from .helpers import CallLog
from .sample import sustained
from .test_snapshots import draw_now

SIZE = (120, 40)


def sim_plan(tag: str, udid: str) -> str:
    arm = '[[arms]]\nname = "minicpm5_1b_ane_pal8"\n'
    return f'tag = "{tag}"\n[device]\nkind = "sim"\nid = "{udid}"\n{arm}'


def two_runs(trials: tuple[int, int] = (30, 12)) -> tuple[Runs, list[CallLog]]:
    """Two plan runs on simulated phones, not started: fixed events fed to their pipelines,
    their controls a log of the keys' calls."""
    runs, logs = [], []
    for (tag, udid), n in zip((("lab-a", "SIM-A"), ("lab-b", "SIM-B")), trials, strict=True):
        run = PlanRun(parse_plan(sim_plan(tag, udid), f"{tag}.toml"), RealClock())
        for event in sustained(n):
            if not (isinstance(event, PhaseEvent) and event.phase == "done"):
                run.pipeline.emit(event)  # still running: the queue's end is left out
        run.controls = log = CallLog()
        runs.append(run)
        logs.append(log)
    return Runs.of(runs, ["SIM-A", "SIM-B"]), logs


def make(several: Runs, layout: str = "default") -> Dashboard:
    return Dashboard(several, layouts.resolve(layout))


def overview_text(app: Dashboard) -> str:
    return str(app.query_one(Overview).render())


async def test_a_tab_per_device_and_an_overview_line_each() -> None:
    several, _ = two_runs()
    app = make(several)
    async with app.run_test(size=SIZE) as pilot:
        await draw_now(pilot)
        tabs = app.query_one(TabbedContent)
        assert tabs.tab_count == 2
        lines = overview_text(app).splitlines()
        assert [line.split(" │ ")[0] for line in lines] == ["SIM-A", "SIM-B"]
        assert all("decode " in line and "thermal " in line and "power " in line for line in lines)
        assert "arm minicpm5_1b_gpu_int8" in lines[0]
        status = app.query_one("#run-0 StatusLine", StatusLine)
        assert "lab-a on sim" in str(status.render())


async def test_keys_act_on_the_selected_tab_only() -> None:
    several, (log_a, log_b) = two_runs()
    app = make(several)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("a")
        app.select(1)
        await pilot.pause()
        assert app.feed is several.feeds[1]
        await pilot.press("k", "p")
        await pilot.pause()
        assert log_a.calls == ["abort_arm"]
        assert log_b.calls == ["skip_cooldown", "pause_queue"]


async def test_quit_asks_first_while_any_run_goes_on() -> None:
    several, _ = two_runs()
    # the first run is through: quitting still asks, the second goes on
    several.runs[0].feed.pipeline.emit(PhaseEvent(t=999.0, wall=0.0, source="anemon", phase="done"))
    app = make(several)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.redraw(force=True)
        assert app.panes[0].run_over and not app.panes[1].run_over
        await pilot.press("q")
        await pilot.pause()
        assert app.is_running
        said = [n.message for n in app._notifications]
        assert said[-1] == "press q again within 3 s to end every run"
        await pilot.press("q")
        await pilot.pause()
    assert not app.is_running


def test_the_quit_question_says_every_run_only_when_there_are_several() -> None:
    assert quit_what(1) == "end the run"
    assert quit_what(2) == quit_what(5) == "end every run"


async def test_a_run_that_is_through_is_said_in_its_own_tab() -> None:
    several, _ = two_runs()
    several.runs[1].feed.pipeline.emit(PhaseEvent(t=999.0, wall=0.0, source="anemon", phase="done"))
    app = make(several)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.redraw(force=True)
        assert app.panes[1].run_over and not app.pane.run_over  # the selected one goes on
        assert app.check_action("abort_arm", ())
        app.select(1)
        await pilot.pause()
        assert app.pane.run_over and not app.check_action("abort_arm", ())
        status = app.panes[1].panels.status
        assert status is not None and "run done, not recorded" in str(status.render())


@pytest.mark.parametrize(("layout", "size"), [("default", (120, 40)), ("compact", (80, 24))])
def test_two_phones_snapshot(layout: str, size: tuple[int, int], snap_compare) -> None:
    several, _ = two_runs()
    assert snap_compare(make(several, layout), terminal_size=size, run_before=draw_now)


async def test_a_device_label_that_looks_like_markup_is_its_tab_as_it_is() -> None:
    """A phone's id is data: `[/b]` in it is neither styling nor a MarkupError."""
    several, _ = two_runs()
    several = Runs.of(several.feeds, ["[/b]SIM-A", "[red]SIM-B"])
    app = make(several)
    async with app.run_test(size=SIZE) as pilot:
        await draw_now(pilot)
        tabs = app.query_one(TabbedContent)
        labels = [tabs.get_tab(f"run-{i}").label.plain for i in range(2)]
    assert labels == ["[/b]SIM-A", "[red]SIM-B"]
