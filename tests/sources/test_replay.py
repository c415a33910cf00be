"""The Replayer: paced by an injected clock; pause, speed, seek."""

from __future__ import annotations

import gc
import math
import weakref

from anemon.analysis.summary import summarize
from anemon.events import MarkerEvent, TrialEvent
from anemon.sources import replay as replay_module
from anemon.sources.replay import Replayer
from anemon.store import Session


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def events(n: int = 10):
    return [
        TrialEvent(t=100.0 + i, wall=0.0, arm="a", trial=i, decode_tps=float(i)) for i in range(n)
    ]


def trials(replayer: Replayer) -> int:
    return len(replayer.session.arms["a"]) if "a" in replayer.session.arms else 0


def test_plays_at_the_speed_of_the_clock():
    clock = FakeClock()
    replayer = Replayer(events(), speed=2.0, monotonic=clock)
    assert replayer.duration == 9.0
    clock.now = 2.0  # 4 s of recording at 2x
    assert replayer.tick() == 5 and replayer.position == 4.0
    clock.now = 100.0
    replayer.tick()
    assert replayer.finished and trials(replayer) == 10


def test_pause_stops_time():
    clock = FakeClock()
    replayer = Replayer(events(), monotonic=clock)
    replayer.toggle_pause()
    clock.now = 5.0
    assert replayer.tick() == 0
    replayer.toggle_pause()
    clock.now = 6.0
    replayer.tick()
    assert replayer.position == 1.0 and trials(replayer) == 2


def test_seek_forward_adds():
    replayer = Replayer(events(), monotonic=FakeClock())
    replayer.seek(7.0)
    assert trials(replayer) == 8 and replayer.position == 7.0


def test_seek_back_rebuilds_the_session():
    replayer = Replayer(events(), monotonic=FakeClock())
    replayer.seek(7.0)
    old = replayer.session
    replayer.seek_by(-5.0)
    assert replayer.session is not old and trials(replayer) == 3


def same_as_read(replayer: Replayer) -> bool:
    """The replayer's Session holds what the events up to its position give, read afresh."""
    upto = [e for e in replayer.events if e.t <= replayer.start + replayer.position]
    fresh, got = Session.from_events(upto), replayer.session
    return (fresh.version, fresh.counts, summarize(fresh)) == (
        got.version, got.counts, summarize(got))  # fmt: skip


def test_a_seek_forward_takes_up_the_session_a_seek_back_left():
    replayer = Replayer(events(), monotonic=FakeClock())
    replayer.seek(9.0)  # End
    whole = replayer.session
    replayer.seek(0.0)  # Home
    assert trials(replayer) == 1 and replayer.session is not whole
    replayer.seek(9.0)  # End again: the session left, not its events added again
    assert replayer.session is whole and same_as_read(replayer)


def test_a_seek_past_the_session_left_goes_on_from_it():
    replayer = Replayer(events(), monotonic=FakeClock())
    replayer.seek(6.0)
    left = replayer.session
    replayer.seek(2.0)  # `,`: back
    replayer.seek(4.0)  # not as far: built from here, the one left still kept
    assert replayer.session is not left and same_as_read(replayer)
    replayer.seek(8.0)  # past it: it, and the events after it
    assert replayer.session is left and trials(replayer) == 9 and same_as_read(replayer)


def test_a_seek_forward_builds_afresh_once_the_session_left_cannot_serve():
    clock = FakeClock()
    played = Replayer(events(), monotonic=clock)
    played.seek(6.0)
    left = played.session
    played.seek(1.0)
    gone = weakref.ref(left)
    del left
    clock.now = 7.0  # played past where it was left: let go (the one played on is further)
    played.tick()
    gc.collect()
    assert gone() is None
    played.seek(9.0)
    assert same_as_read(played)
    marked = Replayer(events(), monotonic=FakeClock())
    marked.seek(6.0)
    left = marked.session
    marked.seek(1.0)
    marker = marked.emit_now(MarkerEvent, source="operator", note="look")
    marked.seek(9.0)  # the one left would not show the marker
    assert marked.session is not left and marker in marked.session.markers


def test_a_big_session_is_not_kept_for_a_seek_forward(monkeypatch):
    monkeypatch.setattr(replay_module, "KEPT_AHEAD_MAX", 5)
    replayer = Replayer(events(), monotonic=FakeClock())
    replayer.seek(9.0)  # 10 events: too many to keep
    big = replayer.session
    replayer.seek(0.0)
    replayer.seek(9.0)
    assert replayer.session is not big and same_as_read(replayer)


def test_seek_past_the_end_stops_at_the_end():
    replayer = Replayer(events(), monotonic=FakeClock())
    replayer.seek(1e9)
    assert replayer.finished and replayer.position == 9.0


def test_the_listener_sees_played_events_but_not_a_seeks():
    clock = FakeClock()
    seen = []
    replayer = Replayer(events(), monotonic=clock, listener=seen.append)
    replayer.seek(3.0)
    assert seen == []  # a seek jumps
    clock.now = 2.0
    replayer.tick()
    assert [e.trial for e in seen] == [4, 5]


def test_max_speed_in_bounded_batches(monkeypatch):
    import anemon.sources.replay as replay

    monkeypatch.setattr(replay, "MAX_BATCH", 4)
    replayer = Replayer(events(), speed=math.inf, monotonic=FakeClock())
    assert [replayer.tick() for _ in range(4)] == [4, 4, 2, 0]


def test_speed_steps():
    replayer = Replayer(events(), speed=1.0, monotonic=FakeClock())
    replayer.faster()
    assert replayer.speed == 2.0
    replayer.slower()
    replayer.slower()
    assert replayer.speed == 0.5


def test_a_tick_at_max_speed_stops_at_its_time_budget():
    ticks = iter(range(10**9))
    replayer = Replayer(events(1000), speed=math.inf, monotonic=lambda: float(next(ticks)))
    assert replayer.tick() == 256  # the clock ran past the budget at the first check
    assert not replayer.finished
