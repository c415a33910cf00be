"""What the keys say: the keys help as the README gives the keys, a key with nothing to act on
says why, the end of a run says how it ended, the footer keeps a run's keys in sight."""

from __future__ import annotations

import asyncio
import contextlib

import pytest
from textual.widgets._footer import FooterKey

from anemon.clock import RealClock
from anemon.control.battery import UNPLUG, Prompt
from anemon.control.plan import parse_plan
from anemon.devices.sim import SimDevice
from anemon.events import PhaseEvent
from anemon.feeds.plan import PlanRun
from anemon.ui import keys
from anemon.ui.app import Dashboard
from anemon.ui.help import KeysHelp
from anemon.ui.overview import TAB_KEYS_HELP
from anemon.ui.status import StatusLine, cooling
from tests.control.helpers import one_arm

from .helpers import CallLog, MakeApp, live_feed
from .test_several import make, two_runs

SIZE = (120, 40)
NO_COOLDOWN = "no cooldown or wait to skip"
NOT_COOLING = "no cooldown to extend"
NO_REFERENCE = "no reference: replay SOURCE --overlay OTHER"


def messages(app: Dashboard) -> list[str]:
    return [n.message for n in app._notifications]


async def help_of(app: Dashboard, pilot) -> KeysHelp:
    await pilot.press("question_mark")
    await pilot.pause()
    assert isinstance(app.screen, KeysHelp)
    return app.screen


# -- the keys help ------------------------------------------------------------------------------


async def test_the_keys_help_gives_every_quit_key_and_every_key_that_asks(
    make_app: MakeApp,
) -> None:
    app = make_app(feed=live_feed(CallLog()))
    async with app.run_test(size=SIZE) as pilot:
        shown = await help_of(app, pilot)
        rows = dict(shown.rows)
        assert rows["q, ^c, ^q"].startswith("Leave")
        assert "q, X, ^c and ^q ask first" in shown.note


async def test_the_keys_help_says_k_goes_on_from_the_battery_wait(make_app: MakeApp) -> None:
    app = make_app(feed=live_feed(CallLog()))
    async with app.run_test(size=SIZE) as pilot:
        rows = dict((await help_of(app, pilot)).rows)
    assert "cooldown" in rows["k"] and "unplug/replug wait" in rows["k"]
    [k] = [a for a in keys.ACTIONS if a.keys == "k"]
    assert k.title == "Skip wait"  # the footer's word, true in a cooldown and in the wait


async def test_the_keys_help_of_several_runs_says_how_to_switch_tabs() -> None:
    several, _ = two_runs()
    app = make(several)
    async with app.run_test(size=SIZE) as pilot:
        rows = dict((await help_of(app, pilot)).rows)
        assert rows["←, →"] == TAB_KEYS_HELP
        await pilot.press("escape", "right")  # the keys said: they switch the tab
        await pilot.pause()
        assert app.feed is several.feeds[1]
        await pilot.press("left")
        await pilot.pause()
        assert app.feed is several.feeds[0]


async def test_the_keys_help_of_one_run_has_no_tabs(make_app: MakeApp) -> None:
    app = make_app(feed=live_feed(CallLog()))
    async with app.run_test(size=SIZE) as pilot:
        rows = dict((await help_of(app, pilot)).rows)
    assert "←, →" not in rows


# -- keys with nothing to act on ------------------------------------------------------------


async def test_o_without_a_reference_says_how_to_get_one(make_app: MakeApp) -> None:
    app = make_app()  # a replay, no --overlay
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("o")
        await pilot.pause()
        assert messages(app) == [NO_REFERENCE]
        assert not app.check_action("toggle_overlay", ())
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "Overlay" not in titles  # nothing to offer in the palette
        assert "o" not in dict((await help_of(app, pilot)).rows)


async def test_o_in_a_watch_does_nothing(make_app: MakeApp) -> None:
    app = make_app(feed=live_feed())  # no replay: no --overlay to suggest
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("o")
        await pilot.pause()
        assert messages(app) == []


async def test_k_and_w_without_a_cooldown_say_so_and_still_reach_the_controller(
    make_app: MakeApp,
) -> None:
    controls = CallLog()
    feed = live_feed(controls)
    app = make_app(feed=feed)
    async with app.run_test(size=SIZE) as pilot:
        feed.pipeline.emit(PhaseEvent(t=1.0, wall=0.0, arm="a1", phase="running"))
        await pilot.press("k", "w")
        await pilot.pause()
        assert messages(app) == [NO_COOLDOWN, NOT_COOLING]
    assert controls.calls == ["skip_cooldown", "extend_cooldown 60"]  # recorded by it
    feed.close()


async def test_k_and_w_in_a_cooldown_say_nothing_more(make_app: MakeApp) -> None:
    controls = CallLog()
    feed = live_feed(controls)
    app = make_app(feed=feed)
    async with app.run_test(size=SIZE) as pilot:
        feed.pipeline.emit(PhaseEvent(t=1.0, wall=0.0, arm="a2", phase="cooling"))
        assert cooling(feed.session)
        await pilot.press("w", "k")
        await pilot.pause()
        assert messages(app) == []
    assert controls.calls == ["extend_cooldown 60", "skip_cooldown"]
    feed.close()


async def test_k_goes_on_from_the_battery_wait_and_w_has_nothing_to_extend(
    make_app: MakeApp,
) -> None:
    controls = CallLog()
    feed = live_feed(controls)
    app = make_app(feed=feed)
    async with app.run_test(size=SIZE) as pilot:
        feed.pipeline.emit(PhaseEvent(t=1.0, wall=0.0, arm=None, phase="idle", reason=UNPLUG))
        controls.prompt = Prompt(UNPLUG, keys_only=False)  # the controller asks
        assert not cooling(feed.session)
        await pilot.press("k", "w")
        await pilot.pause()
        assert messages(app) == [NOT_COOLING]
        controls.prompt = None  # the controller says the wait is over
        await pilot.press("k")
        await pilot.pause()
        assert messages(app) == [NOT_COOLING, NO_COOLDOWN]
    feed.close()


BATTERY_PLAN = one_arm("b", seconds=600, extra="[sim]\nplugged = true\n").replace(
    "seconds = 600\n", 'seconds = 600\nbattery = "unplugged"\n'
)
"""The battery protocol on a simulated phone that stays plugged in: the unplug wait lasts
until k."""


async def test_k_in_a_real_unplug_wait_goes_on_without_a_word(make_app: MakeApp) -> None:
    feed = PlanRun(parse_plan(BATTERY_PLAN, "b.toml"), RealClock(speed=10.0))
    assert isinstance(feed.device, SimDevice)
    feed.device.operator_s = None  # the simulator leaves the cable in: only k ends the wait
    app = make_app(feed=feed)
    async with app.run_test(size=SIZE) as pilot:
        runner = asyncio.create_task(feed.run())
        try:
            async with asyncio.timeout(20):
                while feed.controller.prompt is None:
                    await asyncio.sleep(0.02)
                await pilot.press("k")
                while feed.controller.prompt is not None:
                    await asyncio.sleep(0.02)
            notes = [m.note for m in feed.session.markers]
            assert "k: go on (unplug wait)" in notes and "skip cooldown: not cooling" not in notes
            assert NO_COOLDOWN not in messages(app)
        finally:
            feed.stop()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait_for(runner, 20)
            feed.close()


# -- how a run ended ------------------------------------------------------------------------


@pytest.mark.parametrize(("phase", "said"), [("aborted", "run aborted"), ("done", "run done")])
async def test_the_end_of_a_run_says_whether_it_was_aborted(
    make_app: MakeApp, phase: str, said: str
) -> None:
    feed = live_feed(CallLog())
    app = make_app(feed=feed)
    async with app.run_test(size=SIZE) as pilot:
        feed.pipeline.emit(PhaseEvent(t=2.0, wall=0.0, arm=None, phase=phase, reason="x"))
        app.redraw()
        await pilot.pause()
        assert app.pane.run_over
        assert messages(app)[-1] == f"{said}, not recorded"
        assert f"{said}, not recorded" in str(app.query_one(StatusLine).render())
    feed.close()


async def test_an_aborted_run_of_several_says_so_in_its_own_tab() -> None:
    several, _ = two_runs()
    app = make(several)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        several.runs[1].feed.pipeline.emit(PhaseEvent(t=999.0, wall=0.0, arm=None, phase="aborted"))
        app.redraw()
        await pilot.pause()
        assert "SIM-B: run aborted, " in messages(app)[-1]
        assert "run aborted, " in (app.panes[1].panels.status.note or "")
        assert app.panes[0].panels.status.note is None
    for feed in several.feeds:
        feed.close()


# -- the footer -----------------------------------------------------------------------------


def footer_keys(app: Dashboard, width: int) -> set[str]:
    """The keys the footer shows whole within `width` columns."""
    return {
        key.key_display
        for key in app.query(FooterKey)
        if key.region.width and key.region.right <= width
    }


@pytest.mark.parametrize("width", [80, 120])
async def test_a_runs_footer_shows_its_keys(make_app: MakeApp, width: int) -> None:
    app = make_app(feed=live_feed(CallLog()))
    async with app.run_test(size=(width, 30)) as pilot:
        await pilot.pause()
        assert {"q", "?", "a", "X", "k", "p"} <= footer_keys(app, width)
        titles = {c.title for c in app.get_system_commands(app.screen)}
        assert {"Marker", "Layout", "Export", "Screenshot", "+1m cool"} <= titles  # the palette
        rows = dict((await help_of(app, pilot)).rows)
        assert {"m", "l", "e", "s", "w"} <= set(rows)  # and the keys help: every key
