"""Plans on the pymobiledevice3 backend against a virtual iPhone serving DVT (`DvtPhone`, built
by the `dvt_phone` fixture in conftest.py): what the tests here share. Plan time and the
simulated phone's time both run `speed` times real time.

`route` parameterises `dvt_phone` by how DVT is reached: "lockdown" (iOS 16, the lockdown
service) or "rsd" (iOS 17: dtservicehub behind the phone's RSD, found through the stand-in
tunneld).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from anemon.clock import RealClock
from anemon.control.plan import Plan
from anemon.devices.pmd3 import Pmd3Device
from anemon.devices.virtual import VirtualIPhone
from anemon.devices.virtual.rsd import VirtualRsd
from anemon.events import Event
from anemon.feeds.plan import PlanRun
from anemon.simulator import SimulatedIPhone

SPEED = 20.0
"""Plan seconds per real second: a 60 s arm takes 3 s, a 10 s cooldown 0.5 s."""
TIMEOUT_S = 90.0
"""An overall bound on a run; never a timing assertion."""
ARMS = ("minicpm5_1b_ane_pal8", "minicpm5_1b_gpu_int8")
ROUTES = ("lockdown", "rsd")
Operator = Callable[[PlanRun], Coroutine[Any, Any, None]]
VERSIONS = {"lockdown": "16.7.10", "rsd": "17.5.1"}
DVT_SERVICES = {"lockdown": "com.apple.instruments.remoteserver.DVTSecureSocketProxy",
                "rsd": "com.apple.instruments.dtservicehub"}  # fmt: skip
"""The service each route's DVT connections are counted under (`service_starts`)."""


def plan_text(tag: str = "dvt1", *, device: str = "", extra: str = "") -> str:
    return f"""
tag = "{tag}"
[device]
kind = "pymobiledevice3"
poll_s = 0.05
process_s = 0.05
{device}
[protocol]
kind = "sustain"
seconds = 60
[cooldown]
min_s = 10
until = "fair"
cap_s = 60
[guards]
launch_retries = 3
stall_timeout_s = 120
[[arms]]
name = "{ARMS[0]}"
[[arms]]
name = "{ARMS[1]}"
{extra}"""


@dataclass
class DvtPhone:
    """A virtual iPhone serving DVT, its simulator, and how to build the backend for it."""

    virtual: VirtualIPhone
    sim: SimulatedIPhone
    pair: Path
    route: str
    speed: float
    devices: list[Pmd3Device] = field(default_factory=list)

    silent_s: float = 10.0
    """What the backends it builds call a silent sysmontap (real seconds)."""
    rsd: VirtualRsd | None = None
    """The phone's RSD on the "rsd" route."""

    @property
    def dvt_connections(self) -> int:
        """How many DVT connections the phone accepted, over this route's service."""
        return self.virtual.service_starts[DVT_SERVICES[self.route]]

    def unplug(self) -> None:
        """The cable out: the phone leaves usbmuxd, and its tunnel goes down with it."""
        self.virtual.detach()
        if self.rsd is not None:
            self.rsd.tunnel_down()

    def device(self, **options: object) -> Pmd3Device:
        """A backend for this phone, polling fast; closed after the test."""
        device = Pmd3Device(poll_s=0.05, process_s=0.05, reconnect_s=0.05,
                            silent_s=self.silent_s, pairing_records_cache_folder=self.pair,
                            **options)  # type: ignore[arg-type]  # fmt: skip
        self.devices.append(device)
        return device


@dataclass
class Ran:
    run: PlanRun
    events: list[Event]

    def of(self, kind: type[Event]) -> list[Event]:
        return [e for e in self.events if isinstance(e, kind)]


async def run_plan(
    phone: DvtPhone,
    plan: Plan,
    *,
    record: Path | None = None,
    operator: Operator | None = None,
) -> Ran:
    """Run `plan` on a backend for `phone`, `operator(run)` beside it."""
    run = PlanRun(plan, RealClock(speed=phone.speed), record=record, device=phone.device())
    return await run_prepared(run, operator)


async def run_prepared(run: PlanRun, operator: Operator | None = None) -> Ran:
    events: list[Event] = []
    run.pipeline.subscribe(events.append)
    operating = asyncio.create_task(operator(run)) if operator is not None else None
    try:
        async with asyncio.timeout(TIMEOUT_S):
            await run.run()
    finally:
        if operating is not None:
            operating.cancel()
            await asyncio.gather(operating, return_exceptions=True)
        run.close()
    return Ran(run, events)


def outcomes(ran: Ran) -> list[tuple[str, str, str]]:
    result = ran.run.result
    assert result is not None
    return [(o.arm, o.status, o.reason) for o in result.outcomes]


async def running(run: PlanRun, arm: str) -> None:
    while not (run.controller.phase == "running" and run.controller.arm == arm):
        await asyncio.sleep(0.01)


async def prompted(run: PlanRun, start: str) -> None:
    while (prompt := run.controller.prompt) is None or not prompt.question.startswith(start):
        await asyncio.sleep(0.01)
