"""A recording or a raw log, played back through a Replayer."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from anemon.devices import reads_power
from anemon.events import Event, MarkerEvent
from anemon.feeds import Listener
from anemon.feeds.live import until_stopped
from anemon.recording.reader import open_source
from anemon.sources.replay import ReplayClock, Replayer
from anemon.store import Session


class ReplayFeed:
    """`events` played by its own Replayer (`replay`). A view either drives the replay (the
    dashboard's timer ticks it; the operator pauses, seeks, changes the speed) or lets `run`
    play it through (headless); `lifecycle.run_feed` decides which."""

    controls: None = None

    def __init__(
        self,
        events: Sequence[Event],
        title: str,
        tag: str | None = None,
        reads_power: bool | None = None,
        **replay_options: Any,
    ) -> None:
        self.title = title
        self.tag = tag
        self.reads_power = reads_power
        self._listeners: list[Listener] = []
        self.replay = Replayer(events, listener=self._played, **replay_options)
        self.clock = ReplayClock(self.replay)
        self._stop = asyncio.Event()

    @classmethod
    def open(cls, path: Path, **replay_options: Any) -> ReplayFeed:
        """A SOURCE (recording or raw log) read whole, ready to play."""
        reader = open_source(path)
        power = reads_power(reader.device_kind)
        return cls(list(reader), str(path), reader.tag, power, **replay_options)

    @property
    def session(self) -> Session:
        return self.replay.session

    @property
    def status_note(self) -> None:
        """A replay waits for nothing."""
        return None

    @property
    def finished(self) -> bool:
        """Every event has been played."""
        return self.replay.finished

    @property
    def record(self) -> None:
        """A replay records nothing."""
        return None

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def _played(self, event: Event) -> None:
        for listener in self._listeners:
            listener(event)

    def marker(self, note: str) -> None:
        t, wall = self.clock.now(), self.clock.wall()
        self.session.add(MarkerEvent(t=t, wall=wall, source="operator", note=note))

    def stop(self, why: str = "quit") -> None:
        self._stop.set()

    async def run(self) -> None:
        """Play to the end, or until `stop`."""
        await until_stopped(self._stop, self.replay.play())

    def close(self) -> None:
        pass
