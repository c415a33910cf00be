"""--layout NAME|PATH: built-ins, a user's file, and one clear error before the app starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from anemon.errors import USAGE, AnemonError
from anemon.ui import launch
from anemon.ui.layouts import BUILTIN, LAYOUTS_DIR, LayoutError, available, choices, resolve

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
