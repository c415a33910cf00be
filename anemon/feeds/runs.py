"""What a command runs and a view shows: `Runs`, one run or several side by side.

A `Run` is a feed and the device it is labelled with. `anemon run A.toml B.toml` runs one
`PlanRun` per device (`check_distinct`, `shared_clocks`); every other command runs one feed.
The lifecycle (`lifecycle.run_feeds`) runs them all on one event loop; the dashboard shows a
run (several: a tab each, under an overview strip), headless prints each run's lines
(prefixed with its device when there are several: `Runs.prefix`). Each run keeps its own
controller, pipeline and recording.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from anemon.clock import Clock, RealClock, VirtualClock
from anemon.errors import AnemonError
from anemon.feeds import Feed

if TYPE_CHECKING:
    from anemon.control.plan import Plan


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


@dataclass(frozen=True, eq=False)
class Run:
    """One run: its feed, and the device it is labelled with among several."""

    feed: Feed
    label: str


@dataclass(frozen=True)
class Runs:
    """One run or several, side by side (one per device); never none."""

    runs: tuple[Run, ...]

    def __post_init__(self) -> None:
        if not self.runs:
            raise ValueError("at least one run")

    @classmethod
    def one(cls, feed: Feed) -> Runs:
        """A command's single feed (a watch, a replay, one plan)."""
        return cls((Run(feed, feed.title),))

    @classmethod
    def of(cls, feeds: Sequence[Feed], labels: Sequence[str]) -> Runs:
        return cls(tuple(Run(f, name) for f, name in zip(feeds, labels, strict=True)))

    def __iter__(self) -> Iterator[Run]:
        return iter(self.runs)

    def __len__(self) -> int:
        return len(self.runs)

    @property
    def feeds(self) -> tuple[Feed, ...]:
        return tuple(run.feed for run in self.runs)

    @property
    def several(self) -> bool:
        return len(self.runs) > 1

    def prefix(self, run: Run) -> str | None:
        """What a run's lines and toasts start with: its device when there are several, so
        one run's output stays as it always was."""
        return run.label if self.several else None

    @property
    def title(self) -> str:
        """The feed's title; several: each run's tag on its device."""
        if not self.several:
            return self.runs[0].feed.title
        return ", ".join(f"{run.feed.tag} on {run.label}" for run in self.runs)

    @property
    def clock(self) -> Clock:
        """The first run's: it decides the event loop (a VirtualClock when they share its
        loop at speed max, `shared_clocks`)."""
        return self.runs[0].feed.clock

    @property
    def finished(self) -> bool:
        return all(run.feed.finished for run in self.runs)

    def stop(self, why: str = "quit") -> None:
        for run in self.runs:
            run.feed.stop(why)
