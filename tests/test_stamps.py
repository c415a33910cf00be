"""What happens now is stamped in one place: `Pipeline.emit_now` live, `Replayer.emit_now` in a
replay (docs/ARCHITECTURE.md, "One stream of events")."""

from __future__ import annotations

import ast
from pathlib import Path

from anemon.events import Event, MarkerEvent, PhaseEvent, TextEvent
from anemon.pipeline import Pipeline
from anemon.sources.replay import Replayer

PACKAGE = Path(__file__).parents[1] / "anemon"
STAMPERS = {
    "pipeline.py": "Pipeline.emit_now",
    "sources/replay.py": "Replayer.emit_now, and ReplayClock.wall",
    "feeds/live.py": "the closing summary: at the session's last event, for the recording alone",
}
"""The modules that may read a clock's wall time, and why."""


def _wall_reads(path: Path) -> list[int]:
    """The lines of `path` that call `X.wall()` or `X.stamp()`: every event stamped by hand
    reads the wall time."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("wall", "stamp") and not node.args]  # fmt: skip


def test_no_module_stamps_an_event_by_hand():
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        if name != "clock.py" and name not in STAMPERS and (lines := _wall_reads(path)):
            found[name] = lines
    assert not found, f"stamped by hand (use Pipeline.emit_now): {found}"


class StillClock:
    """A Clock stopped at t = 12.5, wall 1012.5."""

    def now(self) -> float:
        return 12.5

    def wall(self) -> float:
        return 1_012.5

    async def sleep(self, seconds: float) -> None:
        raise AssertionError("nothing waits here")


INTO_A_SESSION = {
    "pipeline.py": "Pipeline.emit, the one way into a live session",
    "sources/replay.py": "the Replayer: recorded events, and the replay's markers",
    "analysis/load.py": "a whole file's Session at once (summary, compare, export)",
    "store/session.py": "Session.from_events",
}
"""The modules that may add an event to a Session, and why (docs/ARCHITECTURE.md)."""


def _session_adds(path: Path) -> list[int]:
    """The lines of `path` that call `session.add(...)` or `X.session.add(...)`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "add" and _names_a_session(node.func.value)]  # fmt: skip


def _names_a_session(node: ast.expr) -> bool:
    return (isinstance(node, ast.Name) and node.id == "session") or (
        isinstance(node, ast.Attribute) and node.attr == "session"
    )


def test_only_the_pipeline_and_the_replayer_add_to_a_session():
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        if name not in INTO_A_SESSION and (lines := _session_adds(path)):
            found[name] = lines
    assert not found, f"into a session past the pipeline (use Pipeline.emit): {found}"


def test_emit_now_stamps_with_the_pipelines_clock_and_goes_everywhere_emit_does():
    pipeline = Pipeline(clock=StillClock())
    seen: list[Event] = []
    pipeline.subscribe(seen.append)
    event = pipeline.emit_now(PhaseEvent, arm="a", source="controller", phase="running")
    assert (event.t, event.wall, event.arm, event.phase) == (12.5, 1_012.5, "a", "running")
    assert seen == [event] and pipeline.session.phase == event


def test_a_replays_marker_is_stamped_where_the_replay_has_got_to():
    ticks = iter([0.0, 4.0])  # made, then one tick 4 s later
    recorded = [TextEvent(t=10.0 + i, wall=500.0 + i, line=str(i)) for i in range(10)]
    seen: list[Event] = []
    replayer = Replayer(recorded, monotonic=ticks.__next__, listener=seen.append)
    replayer.tick()
    marker = replayer.emit_now(MarkerEvent, source="operator", note="here")
    assert (marker.t, marker.wall) == (14.0, 504.0)  # 4 s into the recording
    assert seen[-1] == marker and replayer.session.markers[-1] == marker
