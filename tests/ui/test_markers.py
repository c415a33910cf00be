"""A replay's markers: on the timeline, and appended to a documented sidecar file,
`anemon-exports/<recording stem>.markers.jsonl` (docs/spec/cli.md, "Recordings")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from anemon.feeds.replay import EXPORTS_DIR, ReplayFeed, markers_file
from anemon.feeds.runs import Runs
from anemon.ui import layouts
from anemon.ui.app import Dashboard

from .helpers import MakeApp
from .sample import replay_feed, sustained

SIZE = (120, 40)


def markers(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


async def test_a_marker_in_a_replay_is_saved_and_the_notice_says_where(
    make_app: MakeApp, tmp_path: Path
) -> None:
    app = make_app()
    saved = tmp_path / "sample.markers.jsonl"
    async with app.run_test(size=SIZE) as pilot:
        replay = app.replay
        await pilot.press("home", "right")  # 10 s into the recording
        await pilot.press("m", *"hot room", "enter")
        await pilot.press("m", *"fan on", "enter")
        assert app.feed.record == saved
        assert [n.message for n in app._notifications][-1] == f"marker saved to {saved}"
        assert [m.note for m in app.feed.session.markers][-2:] == ["hot room", "fan on"]
    got = markers(saved)
    assert [m["note"] for m in got] == ["hot room", "fan on"]
    assert all(set(m) == {"t", "wall", "note"} for m in got)
    assert got[0]["t"] == pytest.approx(replay.position)
    first = sustained()[0]  # the sample's first event: the recorded wall time at that position
    assert got[0]["wall"] == pytest.approx(first.wall + replay.position)


def test_markers_are_appended_one_object_a_line_across_feeds(tmp_path: Path) -> None:
    """Opened per marker: a second replay of the same recording adds to the same file."""
    for note in ("one", "two"):
        feed = ReplayFeed(sustained(), "runs/x.jsonl", markers_dir=tmp_path)
        feed.marker(note)
    assert [m["note"] for m in markers(tmp_path / "x.markers.jsonl")] == ["one", "two"]


@pytest.mark.parametrize(
    ("source", "name"),
    [
        ("recordings/sim-ab-2b.jsonl", "sim-ab-2b.markers.jsonl"),
        ("../../etc/passwd", "passwd.markers.jsonl"),
        ("/abs/dir/run.log", "run.markers.jsonl"),
        ("..", "replay.markers.jsonl"),
        ("/", "replay.markers.jsonl"),
    ],
)
def test_the_markers_file_never_leaves_its_folder(source: str, name: str, tmp_path: Path) -> None:
    path = markers_file(source, tmp_path)
    assert path == tmp_path / name and path.parent == tmp_path


def test_by_default_the_file_is_in_anemon_exports_under_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    feed = ReplayFeed(sustained(), "elsewhere/run.jsonl")
    feed.marker("note with \x1b[2J and | pipes")
    path = tmp_path / EXPORTS_DIR / "run.markers.jsonl"
    assert feed.record == path
    assert markers(path)[0]["note"] == "note with \x1b[2J and | pipes"  # data, kept as typed


async def test_a_markers_file_that_cannot_be_written_is_said_and_the_marker_stays(
    tmp_path: Path, make_app: MakeApp
) -> None:
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the folder should be")
    app = make_app(feed=replay_feed(markers_dir=blocked))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("m", *"n1", "enter")
        assert app.feed.session.markers[-1].note == "n1"
        note = list(app._notifications)[-1]
        assert note.message.startswith("marker not saved: ") and note.severity == "error"


async def test_a_path_that_looks_like_markup_is_shown_as_it_is(tmp_path: Path) -> None:
    """Paths and typed text are data: `[/bold]` in a folder's name neither styles the toast
    nor ends the dashboard with a MarkupError; a control character is shown escaped."""
    folder = tmp_path / "[/bold] [red]runs\x1b"
    feed = replay_feed(markers_dir=folder)
    app = Dashboard(Runs.one(feed), layouts.resolve("default"), save_dir=tmp_path)
    async with app.run_test(size=SIZE, notifications=True) as pilot:  # toasts drawn
        await pilot.press("m", *"[b]hot[/b]", "enter")
        await pilot.pause(0.3)  # the toast drawn
        shown = [n.message for n in app._notifications][-1]
    assert shown == f"marker saved to {tmp_path}/[/bold] [red]runs\\x1b/sample.markers.jsonl"
    assert markers(folder / "sample.markers.jsonl")[0]["note"] == "[b]hot[/b]"
