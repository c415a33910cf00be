"""Several plan runs at once (`anemon run A.toml B.toml`): one feed for the lifecycle.

`SeveralRuns` holds one `PlanRun` per device and satisfies the Feed protocol where
`lifecycle.run_feed` needs it: `run` runs every plan side by side on one event loop, `stop`
(the operator's quit, SIGINT/SIGTERM/SIGHUP) stops every one, `close` closes every recording.
Views ask for `feeds`: the dashboard shows a tab per run, headless prefixes each run's lines
with its device (`label`). Each run keeps its own controller, pipeline and recording.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from anemon.clock import Clock, RealClock, VirtualClock
from anemon.control.plan import Plan
from anemon.errors import AnemonError
from anemon.feeds import Listener
from anemon.feeds.plan import PlanRun
from anemon.store import Session


def label(plan: Plan) -> str:
    """The device a plan names, as headless lines and the dashboard's tabs show it: its id,
    else its kind (the only attached device of that kind)."""
    return plan.device.id or plan.device.kind


def device_key(plan: Plan) -> tuple[bool, str]:
    """Which phone a plan runs on: simulators by their id (udid), real phones by their id
    whatever the backend (devicectl and pymobiledevice3 reach the same phone); an empty id is
    "the only attached one"."""
    return plan.device.kind == "sim", plan.device.id.casefold()


def check_distinct(plans: Sequence[tuple[Path, Plan]]) -> None:
    """Two plans naming the same device: one line naming both files (exit 2), before anything
    starts."""
    seen: dict[tuple[bool, str], Path] = {}
    for path, plan in plans:
        key = device_key(plan)
        if key in seen:
            what = f'device "{plan.device.id}"' if plan.device.id else "the same device (no id)"
            raise AnemonError(
                f"{seen[key]} and {path} both run on {what}: give each plan its own "
                f"[device] id (a simulator's id is its udid)"
            )
        seen[key] = path


def shared_clocks(speeds: Sequence[float]) -> list[RealClock]:
    """One clock per plan. At speed `max` (inf) they share one VirtualClock's loop, so every
    run's virtual time is the same (the first is the VirtualClock, which runs the loop; the
    others read its time); else each is a RealClock at its speed."""
    clocks: list[RealClock] = []
    virtual: VirtualClock | None = None
    for speed in speeds:
        if speed != float("inf"):
            clocks.append(RealClock(speed))
        elif virtual is None:
            virtual = VirtualClock()
            clocks.append(virtual)
        else:
            clocks.append(RealClock(1.0, virtual.loop.time))
    if virtual is not None and clocks[0] is not virtual:
        raise ValueError("speed max for every plan or for none")
    return clocks


class SeveralRuns:
    """`runs` side by side, as one feed. What a view shows of one run it asks of `feeds`;
    what the composite itself says (session, clock) is the first run's."""

    replay: None = None
    controls: None = None
    """The keys act on one run at a time: the dashboard's selected tab's."""
    status_note: None = None
    tag: None = None

    def __init__(self, runs: Sequence[PlanRun], labels: Sequence[str]) -> None:
        if not runs or len(runs) != len(labels):
            raise ValueError("one label per run, at least one run")
        self.feeds = tuple(runs)
        self.labels = tuple(labels)
        self.errors: dict[int, BaseException] = {}
        """What a run failed with (by its index): the others go on; the run's outcome says."""

    @property
    def title(self) -> str:
        return ", ".join(f"{feed.plan.tag} on {name}" for feed, name in self.pairs)

    @property
    def pairs(self) -> tuple[tuple[PlanRun, str], ...]:
        return tuple(zip(self.feeds, self.labels, strict=True))

    @property
    def session(self) -> Session:
        return self.feeds[0].session

    @property
    def clock(self) -> Clock:
        """The first run's: a VirtualClock when they share its loop (speed max)."""
        return self.feeds[0].clock

    @property
    def reads_power(self) -> bool | None:
        return self.feeds[0].reads_power

    @property
    def finished(self) -> bool:
        return all(feed.finished for feed in self.feeds)

    @property
    def record(self) -> Path | None:
        """Each run records its own (`feeds[i].record`)."""
        return None

    def subscribe(self, listener: Listener) -> None:
        """Every run's events (the lifecycle watches for a recording that cannot be written)."""
        for feed in self.feeds:
            feed.subscribe(listener)

    def marker(self, note: str) -> None:
        """A note for every run (the dashboard notes on the selected run only)."""
        for feed in self.feeds:
            feed.marker(note)

    def stop(self, why: str = "quit") -> None:
        for feed in self.feeds:
            feed.stop(why)

    async def run(self) -> None:
        """Every run at once, until each has ended; a run that fails does not stop the others
        (its error is kept in `errors`, its outcome says so)."""
        results = await asyncio.gather(*(feed.run() for feed in self.feeds), return_exceptions=True)
        for i, result in enumerate(results):
            if isinstance(result, asyncio.CancelledError):
                raise result
            if isinstance(result, BaseException):
                self.errors[i] = result

    def close(self) -> None:
        """Close every run; then raise the first failure (a recording that could not be
        written: exit 2)."""
        failure: BaseException | None = None
        for feed in self.feeds:
            try:
                feed.close()
            except BaseException as e:  # every recording is closed whatever one raised
                failure = failure or e
        if failure is not None:
            raise failure
