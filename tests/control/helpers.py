"""Run plans on the simulator at `max` speed (virtual time) and look at what happened."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from anemon.clock import Clock, VirtualClock
from anemon.control.outcome import ArmOutcome, RunResult
from anemon.control.plan import Plan, parse_plan
from anemon.devices.base import Device
from anemon.devices.sim import SimDevice
from anemon.events import Event, GapEvent
from anemon.feeds.lifecycle import run_feeds
from anemon.feeds.plan import PlanRun
from anemon.feeds.runs import Runs
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


def one_arm(tag: str, *, seconds: float = 60, device: str = "", extra: str = "") -> str:
    """The TOML of a one-arm plan with no cooldown (`device`: a `[device]` section's lines;
    `extra`: sections appended)."""
    device_section = f"[device]\n{device}\n" if device else ""
    return f"""\
tag = "{tag}"
{device_section}[protocol]
seconds = {seconds:g}
[cooldown]
min_s = 0
until = "none"
cap_s = 0
[[arms]]
name = "minicpm5_1b_ane_pal8"
{extra}"""


@dataclass
class Ran:
    result: RunResult
    session: Session
    events: list[Event]
    feed: PlanRun

    def of(self, kind: type[Event]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]

    def log_gaps(self) -> list[GapEvent]:
        """Gaps in the app's log (the power readings have gaps of their own)."""
        return [e for e in self.of(GapEvent) if e.source == self.feed.controller.source]

    def outcome(self, arm: str, round_: int = 1) -> ArmOutcome:
        return next(o for o in self.result.outcomes if o.arm == arm and o.round == round_)


Operator = Callable[[PlanRun], Coroutine[Any, Any, None]]


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
    force: bool = False,
    sim_operator: bool = True,
    keys: bool = True,
) -> Ran:
    """Run at max speed through the feed lifecycle; `operator(feed)` runs beside the
    controller (after `clock.sleep`s). `sim_operator=False`: the simulated phone leaves the
    battery protocol's cable to the test (`set_plugged`, k); `keys`: as in the dashboard."""
    clock = VirtualClock(limit_s=LIMIT_S)
    feed = PlanRun(the_plan, clock, record=record, battery_prompts=battery_prompts, force=force,
                   device=device(the_plan, clock) if device else None, keys=keys)  # fmt: skip
    if not sim_operator:
        assert isinstance(feed.device, SimDevice)
        feed.device.operator_s = None
    events: list[Event] = []
    feed.pipeline.subscribe(events.append)

    async def main() -> None:
        operating = asyncio.create_task(operator(feed)) if operator is not None else None
        try:
            await run_feeds(Runs.one(feed))
        finally:
            if operating is not None:
                operating.cancel()
                await asyncio.gather(operating, return_exceptions=True)

    try:
        clock.run(main())
    finally:
        feed.close()  # already closed by run_feeds, unless virtual time ran out
    assert feed.result is not None
    return Ran(feed.result, feed.session, events, feed)


# -- the simulated operator of the battery protocol --------------------------------------------


def set_plugged(feed: PlanRun, plugged: bool) -> None:
    """The operator pulls the simulated phone's cable out, or puts it back."""
    device = feed.device
    assert isinstance(device, SimDevice)
    device.sync()  # the phone lives up to now as it was
    device.phone.set_plugged(plugged)


async def prompted(feed: PlanRun, start: str) -> float:
    """Wait until the controller asks something that starts with `start`; the time then."""
    while (prompt := feed.controller.prompt) is None or not prompt.question.startswith(start):
        await feed.clock.sleep(1.0)
    return feed.clock.now()


def battery_operator(unplug_after_s: float = 30.0, replug_after_s: float = 20.0) -> Operator:
    """Does as asked: unplugs `unplug_after_s` after the prompt, replugs `replug_after_s` after."""

    async def operate(feed: PlanRun) -> None:
        await prompted(feed, "unplug")
        await feed.clock.sleep(unplug_after_s)
        set_plugged(feed, False)
        await prompted(feed, "replug")
        await feed.clock.sleep(replug_after_s)
        set_plugged(feed, True)

    return operate
