"""A plan run as a live Feed: the device, the pipeline, the recording and the Controller, wired
once for `anemon run`, `anemon demo`, the dashboard and the tests."""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from pathlib import Path

from anemon.clock import Clock, RealClock
from anemon.control.controller import Controller
from anemon.control.outcome import RunResult
from anemon.control.plan import Plan, device_spec
from anemon.control.preflight import find_history, history_folders
from anemon.devices import backend, reads_power
from anemon.devices.base import Device, DeviceInfo
from anemon.events import Event
from anemon.feeds.live import LiveFeed
from anemon.paths import safe_name
from anemon.pipeline import Pipeline
from anemon.recording.writer import DEFAULT_DIR, Recorder, make_header


def make_device(plan: Plan, clock: Clock) -> Device:
    """The backend `device.kind` names, built from what the plan says of it (`device_spec`)."""
    return backend(plan.device.kind).make(device_spec(plan), clock)


class PlanRun(LiveFeed):
    """One execution of a plan; its `controls` (the `controller`) take the operator's actions,
    and stopping it aborts the session the way the abort key does. `force`: go on when a check
    fails (`--force`: the battery protocol's waits time out). `keys`: someone can press k (the
    dashboard; headless nothing reads keys)."""

    def __init__(
        self,
        plan: Plan,
        clock: RealClock,
        *,
        record: Path | Recorder | None = None,
        device: Device | None = None,
        battery_prompts: bool | None = None,
        force: bool = False,
        keys: bool = True,
    ) -> None:
        pipeline = Pipeline(clock=clock)
        self.plan = plan
        self._recorder = Recorder(record) if isinstance(record, Path) else record
        """The recording (None: not recorded): its file claimed now (a `Path` must not exist
        yet), its header written and events recorded once the device is known."""
        self.device = device or make_device(plan, clock)
        self._clock = clock
        self._mirror_dir = Path(tempfile.mkdtemp(prefix="anemon-mirror-"))
        mirror = self._mirror_dir / safe_name(Path(plan.log_path).name, "bench.log")
        beside = self._recorder.path if self._recorder is not None else None
        self.controller = Controller(plan, self.device, pipeline, clock, mirror=mirror,
                                     beside=beside, battery_prompts=battery_prompts,
                                     force=force, keys=keys)  # fmt: skip
        super().__init__(f"{plan.tag} on {plan.device.kind}", pipeline, tag=plan.tag,
                         controls=self.controller)  # fmt: skip
        self.reads_power = reads_power(self.device.kind)
        self.result: RunResult | None = None
        self._early: list[Event] = []
        """What happened before the recording could open (it needs the device's answer): a
        signal's abort marker, say. Written first once it opens."""
        if self._recorder is not None:
            pipeline.subscribe(self._keep_early)
            self.watch_recording(self._recorder)

    def _keep_early(self, event: Event) -> None:
        if self.pipeline.recorder is None:
            self._early.append(event)

    @property
    def clock(self) -> RealClock:
        return self._clock

    @property
    def record(self) -> Path | None:
        """Where the recording goes, from the start (it opens once the device is known)."""
        return self._recorder.path if self._recorder is not None else None

    @property
    def finished(self) -> bool:
        """The plan has run (`result`), or the controller said its queue is through."""
        return self.result is not None or super().finished

    def marker(self, note: str, source: str = "operator") -> None:
        self.controller.marker_now(note, source)

    async def run(self) -> None:
        """Connect, record, run the plan; `result` says how it ended."""
        self._clock.start()
        info = self.device_info = await self.device.connect()
        self._open_recording(info)
        self.controller.device_info = info
        self.controller.history = find_history(
            self.plan.tag, history_folders(self.record, DEFAULT_DIR), exclude=self.record
        )
        try:
            self.result = await self.controller.run()
        finally:
            await self.device.close()

    def stop(self, why: str = "quit") -> None:
        """Mid-run: abort the session (stop the app, read what is pending, finish: exit 130)."""
        super().stop(why)
        if self.result is None:
            self.controller.request_abort_session(f"abort session ({why})")

    def close(self) -> None:
        try:
            super().close()  # the closing summary, then the recording (the pipeline's, once begun)
        finally:
            try:
                if self._recorder is not None:
                    self._recorder.close()  # also when it never began: the claimed name is freed
            finally:
                shutil.rmtree(self._mirror_dir, ignore_errors=True)

    def session_status(self) -> str:
        """As the exit status says: aborted (the operator), failed (an arm failed or was never
        launched, or the run itself failed), else done."""
        result = self.result
        if result is None:
            return "aborted" if self._stop.is_set() else "failed"
        if result.aborted:
            return "aborted"
        return "failed" if result.failures or result.skipped else "done"

    @property
    def recorder(self) -> Recorder | None:
        return self._recorder

    def _open_recording(self, info: DeviceInfo) -> None:
        recorder = self._recorder
        if recorder is None:
            return
        header = make_header(source=self.title, device=dataclasses.asdict(info),
                             plan=self.plan.to_dict())  # fmt: skip
        recorder.begin(header)
        self.pipeline.recorder = recorder
        for event in self._early:
            recorder.write(event)
        self._early.clear()
