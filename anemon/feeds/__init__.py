"""What a view watches: a live session, a plan run or a replay, behind one interface.

The dashboard and the headless printer take a `Feed`; neither knows which kind it has. What a
view may use is declared here and nowhere else: a feed offers replay controls (`replay`) or
run controls (`controls`) or neither, never probed for. `lifecycle.run_feeds` runs any
feeds (`runs.Runs`: one, or several side by side).

The feeds themselves: `live.LiveFeed` (the base of every live feed), `mirror.MirrorFeed`,
`device.DeviceFeed` and `device.ConsoleFeed`, `plan.PlanRun`, `replay.ReplayFeed`; what a command
runs and a view shows is `runs.Runs`, one or several of them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from anemon.clock import Clock
from anemon.events import Event
from anemon.store import Session

if TYPE_CHECKING:
    from anemon.control.battery import Prompt

Listener = Callable[[Event], None]


class ReplayControls(Protocol):
    """What the replay keys and the timeline drive and show (a `Replayer`)."""

    @property
    def session(self) -> Session:
        """What has been played so far (a seek back starts a new one)."""
        ...

    @property
    def start(self) -> float:
        """Session time of the first event."""
        ...

    @property
    def duration(self) -> float:
        """Seconds from the first event to the last."""
        ...

    @property
    def position(self) -> float:
        """Seconds into the recording."""
        ...

    @property
    def speed(self) -> float:
        """A factor of real time (inf: as fast as possible)."""
        ...

    @property
    def paused(self) -> bool: ...

    @property
    def finished(self) -> bool:
        """Every event has been played."""
        ...

    def tick(self) -> int:
        """Add what came due since the last tick; how many events."""
        ...

    def toggle_pause(self) -> None: ...

    def faster(self) -> None: ...

    def slower(self) -> None: ...

    def seek(self, position: float) -> None:
        """Jump to `position` seconds into the recording (clamped)."""
        ...

    def seek_by(self, seconds: float) -> None: ...


class RunControls(Protocol):
    """The operator's actions on a running plan (the Controller): keys, palette, signals; and
    the two states a view shows of it, read from it, never copied."""

    @property
    def paused(self) -> bool:
        """The queue is held (`pause_queue`): no further arm starts until resumed."""
        ...

    @property
    def prompt(self) -> Prompt | None:
        """What the operator is being asked now (the battery protocol's unplug or replug),
        else None."""
        ...

    async def abort_arm(self) -> None:
        """Stop the arm in progress; the queue goes on."""
        ...

    async def abort_session(self) -> None:
        """Stop the arm in progress and every one after it."""
        ...

    async def skip_cooldown(self) -> None: ...

    async def extend_cooldown(self, seconds: float) -> None: ...

    async def pause_queue(self) -> None:
        """Start no further arm after the one in progress, until resumed."""
        ...

    async def resume_queue(self) -> None: ...


class Feed(Protocol):
    """Everything a view may use of what it shows."""

    @property
    def title(self) -> str:
        """The source or device, for the status line."""
        ...

    @property
    def status_note(self) -> str | None:
        """What the source is doing when it has nothing to show yet ("waiting for PATH": the
        mirror does not exist), for the status line; None: nothing to say."""
        ...

    @property
    def tag(self) -> str | None:
        """The session's own tag (a plan's, a recording header's); None: the log's START says."""
        ...

    @property
    def session(self) -> Session:
        """What has been seen so far (a replay seeking back swaps in a new one)."""
        ...

    @property
    def clock(self) -> Clock:
        """Session time: stamps the operator's notes; its kind decides the event loop."""
        ...

    @property
    def reads_power(self) -> bool | None:
        """Whether the source reads device power: False for devicectl, None where no backend
        reads the phone (a mirrored log)."""
        ...

    @property
    def finished(self) -> bool:
        """The source has ended: a plan run's queue is through (done or aborted), a replay has
        played every event, a watch has been stopped."""
        ...

    @property
    def record(self) -> Path | None:
        """Where the session is being recorded (None: it is not)."""
        ...

    @property
    def replay(self) -> ReplayControls | None:
        """Pause, speed and seek, when this is a replay."""
        ...

    @property
    def controls(self) -> RunControls | None:
        """The operator's actions, when this runs a plan."""
        ...

    def subscribe(self, listener: Listener) -> None:
        """`listener` sees every event from now on as it comes (a replay: as it is played)."""
        ...

    def marker(self, note: str, source: str = "operator") -> None:
        """An operator's note (or the dashboard's own, `source`): becomes an event (recorded
        when live)."""
        ...

    def stop(self, why: str = "quit") -> None:
        """Ask `run` to end after reading what is pending. `why` (quit, SIGINT, SIGTERM) is
        recorded where stopping is itself an event: a plan run aborts its session."""
        ...

    async def run(self) -> None:
        """Read the source (or play the replay) until it ends or `stop` is called."""
        ...

    def close(self) -> None:
        """After `run`: close the recording, remove what the feed made."""
        ...
