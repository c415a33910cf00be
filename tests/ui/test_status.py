"""The status line: the tag (the recording's plan tag when the feed has one, else the
START's), the power reading and the charging state."""

from __future__ import annotations

from pathlib import Path

import pytest

from anemon.events import (
    CooldownEvent,
    Event,
    IdleEvent,
    PhaseEvent,
    StartEvent,
    TelemetryEvent,
    TextEvent,
)
from anemon.feeds.replay import ReplayFeed
from anemon.store import Session
from anemon.ui.status import POWER_HELP, StatusLine, power_text, session_tag, status_text

from .helpers import MakeApp
from .sample import replay_feed, sustained

RECORDING = Path(__file__).parents[2] / "recordings" / "sim-sustain-1b-v2.jsonl"


def start(arm: str, t: float, tag: str | None) -> StartEvent:
    return StartEvent(t=t, wall=0.0, arm=arm, tag=tag, line=f"START arm={arm}")


def test_the_tag_is_the_latest_start_lines_when_no_plan_names_it() -> None:
    session = Session()
    assert session_tag(session) is None
    assert "tag —" in status_text(session, "x").plain
    session.add(start("a", 1.0, "first"))
    session.add(start("b", 9.0, None))
    assert "tag first" in status_text(session, "x").plain
    session.add(start("c", 12.0, "second"))
    assert session_tag(session) == "second"
    assert "tag plan-v1" in status_text(session, "x", "plan-v1").plain


def test_a_replay_of_a_recording_carries_its_headers_plan_tag() -> None:
    assert ReplayFeed.open(RECORDING).tag == "sim-sustain-1b-v2"


async def test_the_status_line_shows_the_feeds_tag(make_app: MakeApp) -> None:
    app = make_app(feed=replay_feed(tag="plan-tag"))  # as a recording's header gives it
    async with app.run_test(size=(120, 40)) as pilot:
        app.redraw(force=True)
        await pilot.pause()
        assert "tag plan-tag" in str(app.query_one(StatusLine).render())


async def test_without_a_feed_tag_the_status_line_shows_the_starts(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        app.redraw(force=True)
        await pilot.pause()
        assert "tag sustain-v2" in str(app.query_one(StatusLine).render())


def reading(t: float, watts: float | None, charging: bool, plugged: bool) -> TelemetryEvent:
    return TelemetryEvent(t=t, wall=0.0, power_w=watts, charging=charging, plugged=plugged)


def test_the_status_line_shows_the_latest_watts_and_the_charging_state() -> None:
    session = Session()
    assert power_text(session).plain == "power —"
    session.add(IdleEvent(t=0.0, wall=0.0, battery_state="charging", line="IDLE"))
    assert power_text(session).plain == "power — · charging"  # the app's word, no reading yet
    session.add(reading(1.0, 3.41, charging=True, plugged=True))
    text = power_text(session)
    assert text.plain == "power 3.4 W · charging"
    assert [str(span.style) for span in text.spans] == ["yellow"]  # the charger's watts
    session.add(reading(2.0, 2.96, charging=False, plugged=False))
    assert power_text(session).plain == "power 3.0 W · on battery"
    session.add(reading(3.0, None, charging=False, plugged=True))  # full, on the charger
    assert power_text(session).plain == "power 3.0 W · plugged in"
    assert "│ battery — │ power 3.0 W · plugged in" in status_text(session, "x").plain


def test_where_power_is_not_read_the_status_line_says_so_and_why() -> None:
    assert "devicectl cannot read power" in POWER_HELP
    assert StatusLine("x").tooltip == POWER_HELP


async def test_the_status_line_shows_the_sessions_watts(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        app.redraw(force=True)
        await pilot.pause()
        assert "battery 93 % │ power 4.7 W · on battery" in str(app.query_one(StatusLine).render())


async def test_new_watts_every_second_lay_the_screen_out_only_when_the_height_changes(
    make_app: MakeApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        app.redraw(force=True)
        await pilot.pause()
        status = app.query_one(StatusLine)
        layouts: list[bool] = []
        update = status.update
        monkeypatch.setattr(status, "update", lambda text, layout: layouts.append(layout)
                            or update(text, layout=layout))  # fmt: skip
        session = app.feed.session
        session.add(reading(1e4, 3.3, charging=False, plugged=False))
        status.show(session)
        session.add(reading(1e4 + 1, 13.3, charging=False, plugged=False))
        status.show(session)
        session.add(TextEvent(t=1e4 + 2, wall=0.0, arm="x" * 60, line="a long arm name"))
        status.show(session)
        assert layouts == [False, False, True]
        # the log panel's own size worker (a thread) must end before the app does: the line is
        # shown now (not by a timer that, on a loaded machine, fires only once the app is
        # tearing its widgets down, under a worker that then finds no app), then waited for
        app.redraw(force=True)
        await pilot.pause()
        await app.workers.wait_for_complete()


def test_the_parts_are_packed_into_lines_none_cut_in_two() -> None:
    session = Session.from_events(sustained())
    for width in (60, 80, 120, 160):
        text = status_text(session, "sample.jsonl", width=width)
        lines = text.plain.split("\n")
        assert all(len(line) <= width for line in lines), width
        assert all(not line.endswith("│ ") and not line.startswith(" │") for line in lines)
        assert " │ ".join(lines) == status_text(session, "sample.jsonl").plain
    assert "battery 93 % │ power 4.7 W · on battery" in status_text(session, "x", width=80).plain


async def test_a_resized_status_line_is_packed_again_at_once(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        app.redraw(force=True)
        await pilot.pause()
        status = app.query_one(StatusLine)
        before = str(status.render()).count("\n")
        app.feed.replay.toggle_pause()  # no new data from here on
        await pilot.resize_terminal(80, 40)
        await pilot.pause()
        lines = str(status.render()).split("\n")
        assert len(lines) > before + 1 and all(len(line) <= 78 for line in lines)


def test_a_backend_that_reads_no_power_says_so():
    session = Session()
    assert power_text(session, reads_power=False).plain == "power n/a (devicectl)"
    assert "power n/a (devicectl)" in status_text(session, "x", reads_power=False).plain


def test_the_phase_line_shows_what_the_operator_is_asked_while_the_queue_waits():
    session = Session()
    session.add(PhaseEvent(t=1.0, wall=0.0, phase="idle",
                           reason="unplug the phone now (battery protocol)"))  # fmt: skip
    assert "phase idle: unplug the phone now (battery protocol)" in status_text(session, "x").plain
    session.add(PhaseEvent(t=2.0, wall=0.0, phase="launching", reason="round 2"))
    assert "phase launching │" in status_text(session, "x").plain


def test_a_held_queue_is_said_in_the_status_text() -> None:
    assert "queue held" not in status_text(Session(), "x").plain
    assert "queue held" in status_text(Session(), "x", held=True).plain


async def test_p_shows_queue_held_until_pressed_again(make_app: MakeApp) -> None:
    from .helpers import CallLog, live_feed

    app = make_app(feed=live_feed(CallLog()))
    async with app.run_test(size=(120, 40)) as pilot:
        status = app.query_one(StatusLine)
        await pilot.press("p")
        await pilot.pause()
        assert "queue held" in str(status.render())
        app.feed.session.add(TextEvent(t=1.0, wall=0.0, line="later"))  # it lasts
        app.redraw(force=True)
        await pilot.pause()
        assert "queue held" in str(status.render())
        await pilot.press("p")
        await pilot.pause()
        assert "queue held" not in str(status.render())


async def test_the_hold_shown_is_the_controllers_own_not_a_copy(make_app: MakeApp) -> None:
    """Held by another caller than the key (the palette, a second tab's key): said, and `p`
    then resumes it."""
    from .helpers import CallLog, live_feed

    controls = CallLog()
    app = make_app(feed=live_feed(controls))
    async with app.run_test(size=(120, 40)) as pilot:
        status = app.query_one(StatusLine)
        await controls.pause_queue()
        app.redraw(force=True)
        await pilot.pause()
        assert "queue held" in str(status.render())
        await pilot.press("p")
        await pilot.pause()
        assert controls.calls == ["pause_queue", "resume_queue"]
        assert "queue held" not in str(status.render())


def test_waiting_is_said_only_while_no_line_has_been_read() -> None:
    session = Session()
    assert "waiting for m.log" in status_text(session, "m.log", waiting="waiting for m.log").plain
    session.add(start("a", 1.0, None))
    assert "waiting" not in status_text(session, "m.log", waiting="waiting for m.log").plain


async def test_the_dashboard_says_it_waits_for_a_missing_mirror(
    make_app: MakeApp, tmp_path: Path
) -> None:
    from anemon.feeds.mirror import MirrorFeed
    from anemon.pipeline import Pipeline

    path = tmp_path / "later.log"
    app = make_app(feed=MirrorFeed(path, Pipeline()))
    async with app.run_test(size=(120, 40)) as pilot:
        app.redraw(force=True)
        await pilot.pause()
        assert f"waiting for {path}" in str(app.query_one(StatusLine).render())
        path.write_text("")
        app.feed.pipeline.emit(start("a", 1.0, None))  # a line read
        app.redraw(force=True)
        await pilot.pause()
        assert "waiting for" not in str(app.query_one(StatusLine).render())


def test_the_apps_memory_and_cpu_once_a_process_reading_came() -> None:
    session = Session()
    session.add(start("a", 0.0, "t"))
    assert "app " not in status_text(session, "x").plain  # no DVT: nothing said of the app
    session.add(TelemetryEvent(t=1.0, wall=0.0, arm="a", pid=7, mem_gb=1.934, cpu_pct=None))
    assert "app 1.93 GB · CPU n/a" in status_text(session, "x").plain  # a first sample
    session.add(TelemetryEvent(t=2.0, wall=0.0, arm="a", pid=7, mem_gb=2.1, cpu_pct=85.4))
    assert "app 2.10 GB · CPU 85 %" in status_text(session, "x").plain


def cooling_events(elapsed_s: float = 25.0) -> list[Event]:
    """The sample's events, then a cooldown `elapsed_s` in (3 min minimum, 10 min cap)."""
    return [
        *sustained(),
        PhaseEvent(t=700, wall=700, source="controller", phase="cooling", arm=None),
        CooldownEvent(t=700 + elapsed_s, wall=700 + elapsed_s, elapsed_s=elapsed_s, min_s=180,
                      cap_s=600, until="none", thermal=2, basis="host"),
    ]  # fmt: skip


BRIEF_COOLING = "cooling 0:25 │ min 3:00 (2:35 left) │ until none │ now serious │ cap 10:00"


def test_the_cooldown_line_fits_80_columns_eliding_in_the_documented_order() -> None:
    """Issue 24: "at 80x24 the cooldown line wraps mid-phrase". It is one line at 80 columns
    (78 inside the padding): the thermal reading's source goes first, then the cap's time
    left, then the minimum's; below that its phrases go to the next line whole."""
    session = Session.from_events(cooling_events())
    whole = (
        "cooling 0:25 │ min 3:00 (2:35 left) │ until none │ now serious (host) │ "
        "cap 10:00 (9:35 left)"
    )
    assert status_text(session, "x").plain.split("\n")[-1] == whole
    assert status_text(session, "x", width=200).plain.split("\n")[-1] == whole
    cooling = {w: status_text(session, "x", width=w).plain.split("\n")[-1] for w in (90, 78)}
    assert cooling[90] == whole.replace(" (host)", "")
    assert (
        cooling[78] == "cooling 0:25 │ min 3:00 (2:35 left) │ until none │ now serious │ cap 10:00"
    )
    phrases = ("cooling 0:25", "min 3:00", "until none", "now serious", "cap 10:00")
    for width in (20, 40, 50, 60):
        lines = status_text(session, "x", width=width).plain.split("\n")
        tail = lines[-next(n for n in range(1, 6) if lines[-n].startswith("cooling")) :]
        assert all(len(line) <= width for line in tail), width
        assert [p for line in tail for p in line.split(" │ ")] == list(phrases), width


async def test_at_80x24_the_cooldown_is_one_line_in_the_dashboard(make_app: MakeApp) -> None:
    from anemon.feeds.live import LiveFeed
    from anemon.pipeline import Pipeline

    feed = LiveFeed("fake iPhone", Pipeline())
    app = make_app(feed=feed)
    async with app.run_test(size=(80, 24)) as pilot:
        for event in cooling_events():
            feed.pipeline.emit(event)
        app.redraw(force=True)
        await pilot.pause()
        lines = str(app.query_one(StatusLine).render()).split("\n")
        assert (
            lines[-1]
            == "cooling 0:25 │ min 3:00 (2:35 left) │ until none │ now serious │ cap 10:00"
        )
