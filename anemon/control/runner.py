"""A plan run as a live Feed (anemon/feeds.py): the device, the pipeline, the recording and
the Controller, wired once for `anemon run`, `anemon demo`, the dashboard and the tests."""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
import signal
import tempfile
from pathlib import Path

from anemon.clock import Clock, RealClock
from anemon.control.controller import Controller
from anemon.control.outcome import RunResult
from anemon.control.plan import Plan
from anemon.devices import real_device
from anemon.devices.base import Device, DeviceInfo
from anemon.pipeline import Pipeline
from anemon.recording.writer import Recorder, make_header
from anemon.store import Session


def make_device(plan: Plan, clock: Clock) -> Device:
    """The backend `device.kind` names."""
    kind, spec = plan.device.kind, plan.device
    if kind == "sim":
        from anemon.devices.sim import from_plan

        return from_plan(plan, clock)
    return real_device(kind, spec.id, poll_s=spec.poll_s)


class PlanRun:
    """One execution of a plan; a live Feed whose `controller` takes the operator's actions."""

    replay = None

    def __init__(
        self,
        plan: Plan,
        clock: RealClock,
        *,
        record: Path | None = None,
        device: Device | None = None,
        battery_prompts: bool | None = None,
    ) -> None:
        self.plan = plan
        self.clock = clock
        self.title = f"{plan.tag} on {plan.device.kind}"
        self.tag = plan.tag
        self.record = record
        """Where the recording goes (None: not recorded); opened once the device is known."""
        self.pipeline = Pipeline(clock=clock)
        self.device = device or make_device(plan, clock)
        self._mirror_dir = Path(tempfile.mkdtemp(prefix="anemon-mirror-"))
        mirror = self._mirror_dir / Path(plan.log_path).name
        self.controller = Controller(plan, self.device, self.pipeline, clock, mirror=mirror,
                                     battery_prompts=battery_prompts)  # fmt: skip
        self.result: RunResult | None = None

    @property
    def session(self) -> Session:
        return self.pipeline.session

    def marker(self, note: str) -> None:
        self.controller.marker_now(note)

    async def run(self) -> None:
        """Connect, record, run the plan; `result` says how it ended."""
        self.clock.start()
        info = await self.device.connect()
        self._open_recording(info)
        try:
            self.result = await self.controller.run()
        finally:
            await self.device.close()

    def stop(self) -> None:
        """Quit mid-run: stop the app, read what is pending, finish (exit 130)."""
        if self.result is None:
            self.controller.request_abort_session("abort session (quit)")

    def close(self) -> None:
        self.pipeline.close()
        shutil.rmtree(self._mirror_dir, ignore_errors=True)

    def _open_recording(self, info: DeviceInfo) -> None:
        if self.record is None:
            return
        header = make_header(source=self.title, device=dataclasses.asdict(info),
                             plan=self.plan.to_dict())  # fmt: skip
        self.pipeline.recorder = Recorder(self.record, header)


async def run_with_signals(run: PlanRun) -> None:
    """Run to the end; SIGINT/SIGTERM abort the session the way the abort key does."""
    loop = asyncio.get_running_loop()
    signals = (signal.SIGINT, signal.SIGTERM)
    for sig in signals:
        loop.add_signal_handler(
            sig, run.controller.request_abort_session, f"abort session ({sig.name})"
        )
    try:
        await run.run()
    finally:
        for sig in signals:
            loop.remove_signal_handler(sig)
