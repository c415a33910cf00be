"""Run plans on the simulator at `max` speed (virtual time) and look at what happened."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from anemon.clock import Clock, VirtualClock
from anemon.control.outcome import RunResult
from anemon.control.plan import Plan, parse_plan
from anemon.devices.base import Device
from anemon.events import Event
from anemon.feeds.lifecycle import run_feed
from anemon.feeds.plan import PlanRun
from anemon.store import Session

LIMIT_S = 6 * 3600.0
"""No test run may pass this much virtual time (a wait that never ends fails instead)."""

TWO_ARMS = """
tag = "t"
[[arms]]
name = "minicpm5_1b_ane_pal8"
[[arms]]
name = "minicpm5_1b_gpu_int8"
"""


@dataclass
class Ran:
    result: RunResult
    session: Session
    events: list[Event]
    feed: PlanRun

    def of(self, kind: type[Event]) -> list:
        return [e for e in self.events if isinstance(e, kind)]

    def outcome(self, arm: str, round_: int = 1):
        return next(o for o in self.result.outcomes if o.arm == arm and o.round == round_)


Operator = Callable[[PlanRun], Awaitable[None]]


def plan(text: str, **sections: str) -> Plan:
    """A plan from TOML text, with extra sections appended."""
    return parse_plan(text + "\n" + "\n".join(sections.values()), "test.toml")


def run_plan(
    the_plan: Plan,
    *,
    operator: Operator | None = None,
    record: Path | None = None,
    device: Callable[[Plan, Clock], Device] | None = None,
    battery_prompts: bool | None = None,
) -> Ran:
    """Run at max speed through the feed lifecycle; `operator(feed)` runs beside the
    controller (after `clock.sleep`s)."""
    clock = VirtualClock(limit_s=LIMIT_S)
    feed = PlanRun(the_plan, clock, record=record, battery_prompts=battery_prompts,
                   device=device(the_plan, clock) if device else None)  # fmt: skip
    events: list[Event] = []
    feed.pipeline.subscribe(events.append)

    async def main() -> None:
        operating = asyncio.create_task(operator(feed)) if operator is not None else None
        try:
            await run_feed(feed)
        finally:
            if operating is not None:
                operating.cancel()
                await asyncio.gather(operating, return_exceptions=True)

    try:
        clock.run(main())
    finally:
        feed.close()  # already closed by run_feed, unless virtual time ran out
    assert feed.result is not None
    return Ran(feed.result, feed.session, events, feed)
