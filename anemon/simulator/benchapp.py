"""The bench app, one process: a virtual-time state machine that writes its log lines.

The phone (phone.py) calls `fire()` at `next_at`; each step writes the line of the event that
just completed and schedules the next. Nothing here knows about real time.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from anemon.simulator import lines
from anemon.simulator.config import SimArmConfig
from anemon.simulator.disk import Compile, Disk
from anemon.simulator.env import AppParams
from anemon.simulator.power import PowerParams
from anemon.simulator.process import APP_PROCESS, GB, Memory, Usage, cpu_pct, gpu_pct
from anemon.simulator.profiles import PATHS, PROFILES, ArmProfile
from anemon.simulator.thermal import Heat, throttle

STARTUP_S = 0.35
"""From launch to the first line (process start, `free_gb`)."""
TRIAL_OVERHEAD_S = 0.05
"""Per trial, besides prefill and decode (tokenizing, sampling setup)."""
PREFILL_NOISE = 1.25
"""Prefill's spread relative to decode's."""
LOAD_POWER = 0.5
HANG_POWER = 0.3
"""Fractions of the arm's heat (and of its device power above idle) drawn while loading, and
while hung (in its first generation, or stalled mid-run)."""
GPU_TIMEOUT = "Metal GPU Timeout"
MID_RUN_FAULTS = ("gpu_timeout", "stall")
"""Faults that strike `fault_at_s` into the timed trials."""


class AppHost(Protocol):
    """What the app needs from the phone."""

    now: float
    disk: Disk

    def sense(self) -> lines.Sensors: ...

    def write(self, bundle: str, path: str, line: str) -> None: ...


@dataclass(frozen=True, slots=True)
class AppSetup:
    pid: int
    bundle: str
    params: AppParams
    arm: SimArmConfig | None
    """None: AB_MODEL names no profile (and no `[sim.arms]` settings are named AB_ARM)."""
    os_build: str
    started: float


class BenchApp:
    """One launch of the bench app."""

    def __init__(self, setup: AppSetup, rng: random.Random) -> None:
        self.setup = setup
        self.rng = rng
        self.phase = "starting"
        self.next_at: float | None = setup.started + STARTUP_S
        self._then: Callable[[AppHost], None] = self._start
        self._timed = 0
        self._first_timed_at = 0.0
        arm = setup.arm
        self.profile: ArmProfile | None = PROFILES[arm.profile] if arm else None
        self.fault = arm.fault if arm else "none"
        self.cold = False
        self._load_s = 0.0
        self._decode_tps = 0.0
        """The decode speed of the trial in progress."""
        self.memory = Memory(self.profile)

    @property
    def pid(self) -> int:
        return self.setup.pid

    @property
    def exited(self) -> bool:
        return self.phase == "exited"

    @property
    def heat(self) -> Heat:
        """What the app draws now (screen and USB are the phone's)."""
        share = {"loading": LOAD_POWER, "trial": 1.0, "hung": HANG_POWER}.get(self.phase, 0.0)
        if self.profile is None or share == 0.0:
            return Heat()
        watts = self.profile.heat_w * share
        return Heat(chip_w=watts, die_rise_c=watts * PATHS[self.profile.compute].die_rise_k_per_w)

    def power_w(self, params: PowerParams) -> float:
        """What the app adds to the phone's base power now (power.py): in a trial, its span
        above idle scaled by the trial's decode rate over the burst (cool) rate."""
        if self.profile is None or self.setup.arm is None:
            return 0.0
        if self.phase == "trial":
            share = self._decode_tps / self.profile.decode_tps
        else:
            share = {"loading": LOAD_POWER, "hung": HANG_POWER}.get(self.phase, 0.0)
        return params.arm_w(self.setup.arm.burst_w, share)

    def usage(self, now: float) -> Usage:
        """What the kernel reads of the process now (process.py)."""
        p = self.profile
        footprint = round(self.memory.footprint_gb(now) * GB)
        return Usage(self.pid, APP_PROCESS, footprint, cpu_pct(self.phase, p),
                     gpu_pct(self.phase, p))  # fmt: skip

    def fire(self, host: AppHost) -> None:
        """Run the event due at `next_at` (the host's clock is there)."""
        self._then(host)

    def _at(self, t: float, then: Callable[[AppHost], None]) -> None:
        self.next_at, self._then = t, then

    def _write(self, host: AppHost, line: str) -> None:
        host.write(self.setup.bundle, self.setup.params.log_path, line)

    @property
    def _arm(self) -> str | None:
        """The `arm=` of its lines: AB_ARM, else AB_MODEL (None when neither was given)."""
        return self.setup.params.arm

    @property
    def _named(self) -> str:
        """The arm of a launch that got as far as loading (AB_MODEL named a profile)."""
        assert self._arm is not None
        return self._arm

    def _end(self, host: AppHost, reason: str) -> None:
        self._write(host, lines.end(self._arm, reason, self._timed))
        self.phase, self.next_at = "exited", None

    def _fail(self, host: AppHost, *messages: str) -> None:
        for message in messages:
            self._write(host, lines.error(self._arm, message))
        self._end(host, "error")

    # -- start and load ------------------------------------------------------------------

    def _start(self, host: AppHost) -> None:
        params = self.setup.params
        if params.problems:
            self._fail(host, *params.problems)
        elif params.mode == "idle":
            self.phase = "idle"
            self._idle(host)
        elif self.profile is None:
            self._fail(host, f"unknown model {params.model!r}")
        else:
            self._begin_load(host, self.profile)

    def _idle(self, host: AppHost) -> None:
        self._write(host, lines.idle(host.sense()))
        self._at(host.now + self.setup.params.interval, self._idle)

    def _begin_load(self, host: AppHost, p: ArmProfile) -> None:
        params = self.setup.params
        n = params.trials if params.mode == "ab" else None
        free = host.sense().free_gb
        self._write(host, lines.start(self._named, p, self.setup.os_build, free, params.mode,
                                      params.prompt, params.gen, n))  # fmt: skip
        self.cold = host.disk.is_cold(p.name)
        if self.cold:
            load_s = p.load_cold_s * self.rng.uniform(0.97, 1.03)
            host.disk.begin_compile(Compile(p.name, p.cache_gb, host.now, host.now + load_s))
        else:
            load_s = self.rng.uniform(*p.load_warm_s)
        self.phase = "loading"
        self._load_s = load_s
        self.memory.load_from, self.memory.load_s = host.now, load_s
        self._at(host.now + load_s, self._loaded)

    def _loaded(self, host: AppHost) -> None:
        p = self.profile
        assert p is not None
        injected = PATHS[p.compute].load_error if self.fault == "load_error" else None
        failure = p.load_error or injected
        if failure:
            host.disk.abort_compile(p.name, host.now)
            self._fail(host, failure)
            return
        host.disk.finish_compile(p.name, host.now)
        self._write(host, lines.load(self._named, self._load_s, self.cold, p.footprint_gb))
        if p.hangs or self.fault == "hang":
            self.phase, self.next_at = "hung", None
            return
        self.phase = "trial"
        self._begin_trial(host, 0)

    # -- trials --------------------------------------------------------------------------

    def _begin_trial(self, host: AppHost, index: int) -> None:
        params = self.setup.params
        if index == 0:
            self.memory.generating_from = host.now
        if index == 1:
            self._first_timed_at = host.now
            if self.fault == "jetsam" and self.setup.arm is not None:
                self.memory.leak_from = host.now + self.setup.arm.fault_at_s
        decode, prefill = self._speeds(host.sense().die_c)
        self._decode_tps = decode
        done = host.now + params.prompt / prefill + params.gen / decode + TRIAL_OVERHEAD_S
        strike = self._strikes_at()
        if index >= 1 and strike is not None and strike < done:
            then = self._stall if self.fault == "stall" else lambda h: self._fail(h, GPU_TIMEOUT)
            self._at(max(strike, host.now), then)
            return
        result = lines.TrialResult(index, index == 0, done - self.setup.started, params.prompt,
                                   prefill, decode, params.gen)  # fmt: skip
        self._at(done, lambda h: self._trial_done(h, result))

    def _speeds(self, die_c: float) -> tuple[float, float]:
        """(decode, prefill) tok/s of a trial starting now: throttled, with a little noise."""
        p = self.profile
        assert p is not None
        path = PATHS[p.compute]
        dec_f, pre_f = throttle(path, die_c)
        noise = path.decode_noise
        decode = p.decode_tps * dec_f * (1.0 + self.rng.gauss(0.0, noise))
        prefill = p.prefill_tps * pre_f * (1.0 + self.rng.gauss(0.0, noise * PREFILL_NOISE))
        return decode, prefill

    def _strikes_at(self) -> float | None:
        """When a mid-run fault (gpu_timeout, stall) strikes: `fault_at_s` into the timed
        trials; the trial in progress then never completes."""
        arm = self.setup.arm
        if arm is None or arm.fault not in MID_RUN_FAULTS:
            return None
        return self._first_timed_at + arm.fault_at_s

    def _stall(self, host: AppHost) -> None:
        """Wedged mid-run (a deadlock, a GPU that never returns): alive, silent for good."""
        self.phase, self.next_at = "hung", None

    def _trial_done(self, host: AppHost, result: lines.TrialResult) -> None:
        self._write(host, lines.trial(self._named, result, host.sense()))
        if not result.warmup:
            self._timed += 1
        if self._more_trials(host):
            self._begin_trial(host, result.index + 1)
        else:
            self._end(host, "done")

    def _more_trials(self, host: AppHost) -> bool:
        params = self.setup.params
        if self._timed == 0:
            return True
        if params.mode == "ab":
            return self._timed < params.trials
        return host.now - self._first_timed_at < params.seconds

    def killed(self, host: AppHost) -> None:
        """Terminated: a compile in progress stops where it is."""
        if self.phase == "loading" and self.profile is not None:
            host.disk.abort_compile(self.profile.name, host.now)
        self.phase, self.next_at = "exited", None
