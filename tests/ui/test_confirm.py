"""Keys that end something ask first during a run (the same key again within 3 s); in a
watch or a replay they act at once. `?` shows the keys, Escape hides them."""

from __future__ import annotations

import pytest

from anemon.ui.app import Dashboard
from anemon.ui.confirm import WINDOW_S, Confirm
from anemon.ui.help import KeysHelp

from .helpers import CallLog, MakeApp, live_feed

SIZE = (120, 40)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_same_key_twice_within_the_window_confirms() -> None:
    clock = FakeClock()
    confirm = Confirm(clock=clock)
    assert not confirm.press("q")
    clock.now += WINDOW_S
    assert confirm.press("q")
    assert not confirm.press("q")  # confirmed: forgotten, a third press asks again


def test_a_press_after_the_window_asks_again() -> None:
    clock = FakeClock()
    confirm = Confirm(clock=clock)
    assert not confirm.press("q")
    clock.now += WINDOW_S + 0.1
    assert not confirm.press("q")
    clock.now += 1.0
    assert confirm.press("q")


def test_another_key_starts_over() -> None:
    confirm = Confirm(clock=FakeClock())
    assert not confirm.press("q")
    assert not confirm.press("X")
    assert not confirm.press("q")
    assert confirm.press("q")


def plan_run(make_app: MakeApp) -> tuple[Dashboard, CallLog, FakeClock]:
    controls = CallLog()
    app = make_app(feed=live_feed(controls))
    clock = FakeClock()
    app.confirm = Confirm(clock=clock)
    return app, controls, clock


def messages(app: Dashboard) -> list[str]:
    return [n.message for n in app._notifications]


@pytest.mark.parametrize("key", ["q", "ctrl+c", "ctrl+q"])
async def test_during_a_run_one_press_asks_and_a_second_quits(make_app: MakeApp, key: str) -> None:
    app, _, _ = plan_run(make_app)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(key)
        await pilot.pause()
        assert app.is_running
        shown = {"q": "q", "ctrl+c": "^c", "ctrl+q": "^q"}[key]
        assert messages(app) == [f"press {shown} again within 3 s to end the run"]
        await pilot.press(key)
        await pilot.pause()
    assert app.return_code == 0


async def test_a_second_q_after_three_seconds_only_asks_again(make_app: MakeApp) -> None:
    app, _, clock = plan_run(make_app)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("q")
        clock.now += WINDOW_S + 0.5
        await pilot.press("q")
        await pilot.pause()
        assert app.is_running
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running


async def test_X_twice_aborts_the_session_and_once_does_not(make_app: MakeApp) -> None:
    app, controls, clock = plan_run(make_app)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("X")
        await pilot.pause()
        assert controls.calls == []
        assert messages(app) == ["press X again within 3 s to abort the session"]
        await pilot.press("X")
        await pilot.pause()
        assert controls.calls == ["abort_session"]
        clock.now += 10
        await pilot.press("X")
        clock.now += WINDOW_S + 0.1
        await pilot.press("X")
        await pilot.pause()
        assert controls.calls == ["abort_session"]
        assert app.is_running


async def test_q_then_X_does_not_abort(make_app: MakeApp) -> None:
    app, controls, _ = plan_run(make_app)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("q", "X")
        await pilot.pause()
        assert app.is_running and controls.calls == []


@pytest.mark.parametrize("key", ["q", "ctrl+c"])
async def test_a_replay_quits_at_once(make_app: MakeApp, key: str) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(key)
        await pilot.pause()
    assert app.return_code == 0
    assert not any("ctrl+q" in m for m in messages(app))


@pytest.mark.parametrize("key", ["q", "ctrl+c"])
async def test_a_watch_quits_at_once(make_app: MakeApp, key: str) -> None:
    app = make_app(feed=live_feed())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(key)
        await pilot.pause()
        assert not app.is_running


async def test_ctrl_c_never_shows_textuals_hint(make_app: MakeApp) -> None:
    app, _, _ = plan_run(make_app)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert messages(app)
        assert not any("ctrl+q" in m or "to quit the app" in m for m in messages(app))


async def test_the_palette_quits_a_run_at_once(make_app: MakeApp) -> None:
    app, _, _ = plan_run(make_app)
    async with app.run_test(size=SIZE) as pilot:
        [quit_] = [c for c in app.get_system_commands(app.screen) if c.title == "Quit"]
        await quit_.callback()
        await pilot.pause()
        assert not app.is_running


async def test_question_mark_shows_the_keys_and_escape_hides_them(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, KeysHelp)
        keys = dict(app.screen.rows)
        assert keys["space"] == "Pause or resume the replay"
        assert keys["?"] == "Show the keys and what they do"
        assert "X" not in keys  # a replay has no run controls
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, KeysHelp)
        assert app.is_running


async def test_the_keys_help_of_a_run_says_which_keys_ask_first(make_app: MakeApp) -> None:
    app, _, _ = plan_run(make_app)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, KeysHelp)
        assert "X" in dict(app.screen.rows)
        assert "press the same key again within 3 s" in app.screen.note
        await pilot.press("question_mark")
        await pilot.pause()
        assert not isinstance(app.screen, KeysHelp)


async def test_the_keys_help_scrolls_in_a_small_terminal(make_app: MakeApp) -> None:
    """40x12: the help is taller than the screen; it fits the width and ↓ reaches the end."""
    from textual.containers import VerticalScroll

    app = make_app()
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        box = app.screen.query_one(VerticalScroll)
        assert box.outer_size.width <= 40 and box.max_scroll_y > 0
        for _ in range(40):
            await pilot.press("down")
        await pilot.pause()
        assert box.scroll_y == box.max_scroll_y
