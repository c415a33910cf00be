"""The Replayer: paced by an injected clock; pause, speed, seek."""

from __future__ import annotations

import math

from anemon.events import TrialEvent
from anemon.sources.replay import Replayer


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
