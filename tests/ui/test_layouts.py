"""--layout NAME|PATH: built-ins, a user's file, and one clear error before the app starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from anemon.errors import USAGE, AnemonError
from anemon.feeds.runs import Runs
from anemon.ui import launch
from anemon.ui.app import Dashboard
from anemon.ui.layouts import (
    BUILTIN,
    COMPACT,
    DEFAULT,
    DEFAULT_NEEDS,
    LAYOUTS_DIR,
    LayoutError,
    available,
    choices,
    fitting,
    resolve,
    too_small,
)

from .sample import replay_feed


def test_every_builtin_resolves() -> None:
    assert available()[: len(BUILTIN)] == list(BUILTIN)
    for name in BUILTIN:
        assert resolve(name) == LAYOUTS_DIR / f"{name}.tcss"


def test_a_user_file_is_accepted_and_joins_the_cycle(tmp_path: Path) -> None:
    mine = tmp_path / "mine.tcss"
    mine.write_text("#log { height: 3; }\n")
    assert resolve(str(mine)) == mine.resolve()
    assert choices(mine.resolve())[-1] == mine.resolve()
    assert choices(LAYOUTS_DIR / "wall.tcss") == [LAYOUTS_DIR / f"{n}.tcss" for n in available()]


@pytest.mark.parametrize(
    ("layout", "message"),
    [
        ("nope", "no layout named 'nope'"),
        ("missing/dir.tcss", "layout file not found"),
    ],
)
def test_unknown_layouts_are_one_line_usage_errors(layout: str, message: str) -> None:
    with pytest.raises(LayoutError) as info:
        resolve(layout)
    assert message in str(info.value)
    assert "\n" not in str(info.value)
    assert isinstance(info.value, AnemonError) and info.value.exit_status == USAGE


def test_invalid_css_is_caught_before_the_app_starts(tmp_path: Path) -> None:
    bad = tmp_path / "bad.tcss"
    bad.write_text("#charts { colr: red; }\n")
    with pytest.raises(LayoutError, match="not valid Textual CSS: Invalid CSS property 'colr'"):
        resolve(str(bad))


def test_launch_refuses_an_unknown_layout_without_starting() -> None:
    with pytest.raises(LayoutError):
        launch(replay_feed(), layout="nope")


def notes(app: Dashboard) -> list[str]:
    return [n.message for n in app._notifications]


async def test_a_small_terminal_gets_the_compact_layout_and_says_how_to_switch(
    tmp_path: Path,
) -> None:
    """The default layout not chosen (no --layout) in 80x24: compact, and one note about `l`."""
    app = Dashboard(Runs.one(replay_feed()), resolve("default"), save_dir=tmp_path, chosen=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.layout_path == COMPACT
        assert app.query_one("#strips").display and not app.query_one("#charts").display
        assert notes(app) == ["small terminal (80x24): the compact layout; l switches layouts"]
        await pilot.press("l")  # on to the next layout, as ever
        assert app.layout_path == LAYOUTS_DIR / "wall.tcss"


async def test_a_chosen_default_layout_is_kept_in_a_small_terminal_with_a_hint(
    tmp_path: Path,
) -> None:
    app = Dashboard(Runs.one(replay_feed()), resolve("default"), save_dir=tmp_path, chosen=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.layout_path == DEFAULT
        assert notes(app) == ["small terminal (80x24): press l for the compact layout"]
        await pilot.press("l")
        assert app.layout_path == COMPACT


@pytest.mark.parametrize("chosen", [False, True])
async def test_a_large_terminal_keeps_the_default_layout_silently(
    tmp_path: Path, chosen: bool
) -> None:
    app = Dashboard(Runs.one(replay_feed()), resolve("default"), save_dir=tmp_path, chosen=chosen)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.layout_path == DEFAULT and notes(app) == []


def test_only_a_terminal_smaller_than_the_default_needs_is_too_small() -> None:
    assert too_small((80, 24)) and too_small((120, 30)) and too_small((99, 40))
    assert not too_small(DEFAULT_NEEDS) and not too_small((120, 40))
    assert fitting((99, 40)) == COMPACT and fitting(DEFAULT_NEEDS) == DEFAULT


async def test_an_unchosen_layout_follows_the_terminal_as_it_is_resized(tmp_path: Path) -> None:
    app = Dashboard(Runs.one(replay_feed()), resolve("default"), save_dir=tmp_path, chosen=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.layout_path == COMPACT
        await pilot.resize_terminal(200, 60)
        assert app.layout_path == DEFAULT and app.query_one("#charts").display
        assert notes(app)[-1] == "terminal (200x60): the default layout; l switches layouts"
        await pilot.resize_terminal(80, 24)
        assert app.layout_path == COMPACT and app.query_one("#strips").display


async def test_a_layout_chosen_with_the_option_holds_when_the_terminal_grows(
    tmp_path: Path,
) -> None:
    app = Dashboard(Runs.one(replay_feed()), resolve("compact"), save_dir=tmp_path, chosen=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.resize_terminal(200, 60)
        await pilot.resize_terminal(80, 24)
        await pilot.resize_terminal(200, 60)
        assert app.layout_path == COMPACT and notes(app) == []


async def test_a_layout_chosen_with_l_holds_when_the_terminal_is_resized(tmp_path: Path) -> None:
    app = Dashboard(Runs.one(replay_feed()), resolve("default"), save_dir=tmp_path, chosen=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("l")
        chosen = app.layout_path
        assert chosen == LAYOUTS_DIR / "wall.tcss"
        await pilot.resize_terminal(200, 60)
        await pilot.resize_terminal(80, 24)
        assert app.layout_path == chosen
