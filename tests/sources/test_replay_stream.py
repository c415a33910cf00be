"""The Replayer on a source read as it plays (`rest`): a big recording starts at once."""

from __future__ import annotations

import asyncio
import math
import threading
from collections.abc import Iterator

from anemon.analysis.summary import summarize
from anemon.events import Event, StartEvent, TrialEvent
from anemon.sources import replay
from anemon.sources.replay import Background, Inline, Replayer


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def events(n: int, times: list[float] | None = None) -> list[Event]:
    start: list[Event] = [StartEvent(t=0.0, wall=1000.0, arm="a", line="START arm=a")]
    times = times if times is not None else [1.0 + i for i in range(n)]
    return start + [
        TrialEvent(t=t, wall=1000.0 + t, arm="a", trial=i, decode_tps=float(i))
        for i, t in enumerate(times)
    ]


class Counted:
    """A source's events, counting how many were read from it."""

    def __init__(self, items: list[Event]) -> None:
        self.items = items
        self.read = 0

    def __iter__(self) -> Iterator[Event]:
        for item in self.items:
            self.read += 1
            yield item


class Trickle:
    """A rest read behind the replay: one chunk to each other take (none ready between)."""

    def __init__(self, items: list[Event], size: int = replay.CHUNK) -> None:
        self.chunks = [items[i : i + size] for i in range(0, len(items), size)]
        self.gave = False

    def take(self) -> list[Event] | None:
        if self.gave or not self.chunks:
            self.gave = False
            return [] if self.chunks else None
        self.gave = True
        return self.chunks.pop(0)

    def close(self) -> None:
        pass


def test_a_replay_plays_its_head_while_the_rest_is_not_read():
    source = Counted(events(20_000))
    stream = iter(source)
    head = [next(stream) for _ in range(100)]
    clock = FakeClock()
    replayer = Replayer(head, monotonic=clock, rest=Inline(stream), keep=False)
    clock.now = 10.0
    replayer.tick()
    assert len(replayer.session.arms["a"]) == 10  # playing, at its pace
    assert source.read < 100 + 2 * replay.CHUNK  # the rest read when due, not before
    assert replayer.loading and not replayer.finished


def test_a_headless_replay_holds_a_few_chunks_however_long_the_source():
    total = 20 * replay.CHUNK
    stream = iter(events(total))
    replayer = Replayer([next(stream)], speed=math.inf, rest=Inline(stream), keep=False)
    held = []
    while not replayer.finished:
        replayer.tick()
        held.append(len(replayer.events))
    assert max(held) <= 3 * replay.CHUNK
    assert len(replayer.session.arms["a"]) == total  # every trial played


def test_a_streamed_replay_ends_with_the_session_of_one_read_whole():
    # out of order across chunks (a damaged recording): played in time order all the same
    times = [float(i) for i in range(3 * replay.CHUNK)]
    times[2 * replay.CHUNK + 5] = 3.5  # read late, its time among the first chunk's
    times[2 * replay.CHUNK + 6] = math.nan  # takes the previous event's
    whole = Replayer(events(0, times), speed=math.inf)
    whole.seek(whole.duration)
    items = events(0, times)
    clock = FakeClock()
    streamed = Replayer(items[:10], monotonic=clock, rest=Trickle(items[10:]))
    while not streamed.finished:
        clock.now += 500.0
        streamed.tick()
    assert streamed.reordered == whole.reordered == 2
    got, want = streamed.session.arms["a"], whole.session.arms["a"]
    assert got.columns["decode_tps"] == want.columns["decode_tps"]
    assert summarize(streamed.session) == summarize(whole.session)
    # headless (played events let go): the late ones are played when they come
    stream = iter(events(0, times))
    headless = Replayer([next(stream)], speed=math.inf, rest=Inline(stream), keep=False)
    while not headless.finished:
        headless.tick()
    played = headless.session.arms["a"].columns["decode_tps"]
    assert headless.reordered == 2 and sorted(played) == sorted(want.columns["decode_tps"])


def test_an_event_read_late_before_those_played_rebuilds_the_session():
    items = events(0, [1.0, 2.0, 3.0, 1.5])
    clock = FakeClock()
    rest = Trickle(items[3:])  # the START and the trials at 1 and 2 first
    rest.gave = True  # the rest not read yet
    replayer = Replayer(items[:3], monotonic=clock, rest=rest)
    replayer.seek(2.0)
    first = replayer.session
    assert len(first.arms["a"]) == 2
    clock.now = 100.0
    replayer.tick()  # the rest: 3.0, then 1.5 (before 2.0, played already)
    assert replayer.session is not first
    assert list(replayer.session.arms["a"].columns["trial"]) == [0.0, 3.0, 1.0, 2.0]


class Late:
    """A rest whose one chunk comes at its `at`th take."""

    def __init__(self, items: list[Event], at: int) -> None:
        self.items, self.at = items, at

    def take(self) -> list[Event] | None:
        self.at -= 1
        if self.at > 0:
            return []
        items, self.items = self.items, None
        return items

    def close(self) -> None:
        pass


def test_an_event_read_late_lets_go_of_the_session_a_seek_back_left():
    items = events(0, [1.0, 2.0, 3.0, 1.5])
    replayer = Replayer(items[:4], monotonic=FakeClock(), rest=Late(items[4:], at=3))
    replayer.seek(3.0)
    replayer.seek(0.5)  # keeps the session left; the late trial comes at the next seek
    replayer.seek(3.0)
    assert list(replayer.session.arms["a"].columns["trial"]) == [0.0, 3.0, 1.0, 2.0]


def test_the_background_reader_loads_the_rest_behind_the_replay():
    gate = threading.Event()

    def rest() -> Iterator[Event]:
        gate.wait(10)
        yield from events(3 * replay.CHUNK)[1:]

    replayer = Replayer(events(0), speed=math.inf, rest=Background(rest(), after_s=0.0))
    assert replayer.tick() == 1 and replayer.loading  # the START played; the thread started
    assert not replayer.finished
    gate.set()

    async def played() -> None:
        await asyncio.wait_for(replayer.play(), 30)

    asyncio.run(played())
    assert replayer.finished and len(replayer.session.arms["a"]) == 3 * replay.CHUNK
    replayer.seek(0.0)  # every event kept: a seek back plays from the start again
    assert len(replayer.session.arms["a"]) == 0


def test_a_replay_left_stops_its_background_reader():
    stop = threading.Event()

    def endless() -> Iterator[Event]:
        i = 0
        while not stop.is_set():
            i += 1
            yield TrialEvent(t=float(i), wall=0.0, arm="a", trial=i)

    loader = Background(endless(), after_s=0.0)
    replayer = Replayer(events(0), speed=math.inf, rest=loader)
    replayer.tick()
    replayer.close()
    loader._thread.join(10)  # it stops at its next chunk, with the queue full
    stop.set()
    assert not loader._thread.is_alive() and not replayer.loading
