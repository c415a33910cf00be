"""A recording or a raw log, played back through a Replayer."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Collection, Iterable, Iterator
from pathlib import Path
from typing import Any

from anemon.analysis.load import read_readings
from anemon.analysis.summary import EnergyReadings
from anemon.devices import reads_power
from anemon.events import Event, MarkerEvent
from anemon.feeds import Listener
from anemon.feeds.live import until_stopped
from anemon.recording.reader import SourceReader, open_source
from anemon.sources.replay import Background, Inline, Replayer
from anemon.store import Session

EXPORTS_DIR = "anemon-exports"
"""The folder, under the working directory, where a replay's markers go, as the dashboard's
exports and screenshots do (`ui.app`); git ignores it."""
MARKERS_SUFFIX = ".markers.jsonl"
HEAD = 4_096
"""Events read before a streamed replay starts (`ReplayFeed.stream`): its first screen's, a few
ms of reading (65,536, one reader's batch, took ~0.4 s of CPU); the rest is read behind it."""


def markers_file(source: str, directory: Path) -> Path:
    """`directory/<the source's stem>.markers.jsonl`: only the file name of `source` is used,
    so no path in it (`..`, an absolute one) can lead outside `directory`."""
    stem = Path(Path(source).name).stem.strip(". ") or "replay"
    return directory / f"{stem}{MARKERS_SUFFIX}"


class ReplayFeed:
    """`events` played by its own Replayer (`replay`). A view either drives the replay (the
    dashboard's timer ticks it; the operator pauses, seeks, changes the speed) or lets `run`
    play it through (headless); `lifecycle.run_feeds` decides which.

    The operator's markers are the one thing a replay adds: each is appended to a sidecar
    file (`record`), `anemon-exports/<recording stem>.markers.jsonl` by default."""

    controls: None = None

    def __init__(
        self,
        events: Iterable[Event],
        title: str,
        tag: str | None = None,
        reads_power: bool | None = None,
        markers_dir: Path | None = None,
        **replay_options: Any,
    ) -> None:
        self.title = title
        self.markers_dir = markers_dir
        """Where the markers file goes; None: EXPORTS_DIR under the working directory (as it
        is when the first marker is added)."""
        self.tag = tag
        self.reads_power = reads_power
        self._listeners: list[Listener] = []
        self.replay = Replayer(events, listener=self._played, **replay_options)
        self.clock = self.replay.clock
        self._stop = asyncio.Event()
        self._readings: EnergyReadings | None = None
        """Headless (`stream`): the figures' readings, read as they are played, the session's
        rows of them let go (`analysis.load.read_readings`)."""

    @classmethod
    def open(cls, path: Path, **replay_options: Any) -> ReplayFeed:
        """A SOURCE (recording or raw log) read whole, ready to play."""
        reader = open_source(path)
        power = reads_power(reader.device_kind)
        return cls(list(reader), str(path), reader.tag, power, **replay_options)

    @classmethod
    def stream(
        cls, reader: SourceReader, head: list[Event], rest: Iterator[Event], *, headless: bool,
        **replay_options: Any,
    ) -> ReplayFeed:  # fmt: skip
        """A source that plays from its `head` (`head_of`) while `rest` is read: by a thread
        ahead of the dashboard, every event kept for its seeks; headless, when due, the
        played ones let go (its memory does not grow with the file)."""
        feed = cls(
            head, str(reader.path), reader.tag, reads_power(reader.device_kind),
            rest=Inline(rest) if headless else Background(rest), keep=not headless,
            **replay_options,
        )  # fmt: skip
        if headless:
            feed._readings = EnergyReadings()
        return feed

    @property
    def session(self) -> Session:
        return self.replay.session

    def readings(self) -> EnergyReadings | None:
        """The figures' readings of what was played (None: the session holds its rows; the
        figures read them from it)."""
        if self._readings is not None:
            read_readings(self.session, self._readings, release=True)
        return self._readings

    @property
    def status_note(self) -> None:
        """A replay waits for nothing."""
        return None

    @property
    def finished(self) -> bool:
        """Every event has been played."""
        return self.replay.finished

    @property
    def record(self) -> Path:
        """Where this session's new events, the operator's markers, are saved (the replayed
        events are the recording's already)."""
        return markers_file(self.title, self.markers_dir or Path.cwd() / EXPORTS_DIR)

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def _played(self, event: Event) -> None:
        if self._readings is not None:
            read_readings(self.session, self._readings, release=True, when_due=True)
        for listener in self._listeners:
            listener(event)

    def marker(self, note: str, source: str = "operator") -> None:
        """On the timeline, and appended to `record` as `{"t": seconds into the recording,
        "wall": the recorded wall time there, "note"}`: opened per marker, so a kill loses
        none. A file that cannot be written raises OSError (the marker stays on screen)."""
        event = self.replay.emit_now(MarkerEvent, source=source, note=note)
        path = self.record
        line = json.dumps({"t": self.replay.position, "wall": event.wall, "note": note}) + "\n"
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as out:
            out.write(line)

    def stop(self, why: str = "quit") -> None:
        self._stop.set()

    async def run(self) -> None:
        """Play to the end, or until `stop`."""
        await until_stopped(self._stop, self.replay.play())

    def close(self) -> None:
        self.replay.close()


def head_of(
    events: Iterator[Event], kinds: Collection[str], size: int | None = None
) -> list[Event] | None:
    """The first `size` events of a source (`HEAD`), and on to the first of `kinds` if none
    came (what `anemon replay` checks a source by); None when the source ends without one."""
    size = HEAD if size is None else size
    head: list[Event] = []
    found = False
    for event in events:
        head.append(event)
        found = found or event.kind in kinds
        if found and len(head) >= size:
            break
    return head if found else None
