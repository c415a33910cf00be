"""The cooldown: the pure gate and readings, then one `Cooldown` driven by a fake host in
virtual time (its probe, its readings, its steps, the operator's skip, extend and abort)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence

import pytest

from anemon.clock import VirtualClock
from anemon.control.cooldown import (
    Cooldown,
    CooldownHost,
    Gate,
    Probe,
    Reading,
    choose_reading,
    host_thermal,
)
from anemon.control.plan import CooldownSpec
from anemon.devices.base import DeviceError, Telemetry
from anemon.events import CooldownEvent, Event, IdleEvent, Phase, TrialEvent

# -- the gate --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("elapsed", "thermal", "verdict"),
    [
        (100, 0, None),  # cool, but not min_s yet
        (200, 2, None),  # min_s, but serious
        (200, 1, "cool"),
        (200, 0, "cool"),
        (600, 2, "cap"),
        (600, None, "cap"),  # no reading: only the cap proves anything
        (200, None, None),
    ],
)
def test_gate_v2_waits_for_min_and_cool_and_stops_at_the_cap(elapsed, thermal, verdict):
    assert Gate(min_s=180, cap_s=600, until="fair").verdict(elapsed, thermal) == verdict


@pytest.mark.parametrize(("elapsed", "verdict"), [(179.9, None), (180, "min"), (600, "min")])
def test_gate_v1_is_time_alone(elapsed, verdict):
    assert Gate(min_s=180, cap_s=600, until="none").verdict(elapsed, 3) == verdict


@pytest.mark.parametrize(
    ("elapsed", "seconds", "bounds"),
    [
        (150, 100, (280, 600)),  # within the cap: min_s grows from the later of now and min_s
        (100, 50, (230, 600)),  # before min_s: counted from min_s
        (550, 100, (650, 650)),  # past the cap: the cap follows
    ],
)
def test_extending_a_gate_waits_at_least_that_much_more(elapsed, seconds, bounds):
    gate = Gate(min_s=180, cap_s=600, until="none")
    gate.extend(elapsed, seconds)
    assert (gate.min_s, gate.cap_s) == bounds


def test_a_skipped_gate_opens_at_once():
    gate = Gate(min_s=180, cap_s=600, until="fair")
    gate.skipped = True
    assert gate.verdict(0, 3) == "skipped"


@pytest.mark.parametrize(("elapsed", "wait"), [(0, 5), (8, 2), (12, 5), (18, 2), (20, 5)])
def test_the_next_check_lands_on_min_and_cap(elapsed, wait):
    assert Gate(10, 20, "none").next_check_in(elapsed, 5) == wait


# -- the readings ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("idle", "host_c", "last_trial", "reading"),
    [
        (1, 40.0, 2, Reading(1, "app")),  # an IDLE line of this cooldown wins
        (None, 37.0, 1, Reading(2, "host")),  # then the host's battery temperature
        (None, None, 2, Reading(2, "app")),  # then the arm's last TRIAL line
        (None, None, None, Reading(None, "time")),
    ],
)
def test_readings_prefer_idle_lines_then_host_then_the_last_trial(
    idle, host_c, last_trial, reading
):
    assert choose_reading(idle, host_c, last_trial) == reading


@pytest.mark.parametrize(("celsius", "state"), [(31.9, 0), (32.0, 1), (36.0, 2), (45.0, 3)])
def test_host_thermal_from_the_battery_temperature(celsius, state):
    assert host_thermal(celsius) == state


# -- one cooldown, driven by a fake host -------------------------------------------------------

ARM = "next_arm"
PROBE = Probe("com.example.bench", {"AB_MODE": "idle"})
PROBE_PID = 7


class FakeHost:
    """Exactly CooldownHost's members; every call is noted with its session time."""

    __slots__ = ("_aborting", "_app", "_calls", "_clock", "_refuse", "_telemetry")

    def __init__(
        self,
        clock: VirtualClock,
        calls: list[tuple],
        *,
        telemetry: Telemetry | None = None,
        refuse: bool = False,
        app: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self._clock = clock
        self._calls = calls
        self._telemetry = telemetry
        self._refuse = refuse
        self._app = app
        self._aborting = False

    @property
    def aborting(self) -> bool:
        return self._aborting

    @property
    def telemetry(self) -> Telemetry | None:
        return self._telemetry

    def set_phase(self, phase: Phase, arm: str | None, reason: str = "") -> None:
        self._calls.append((self._clock.now(), "phase", phase, arm, reason))

    def emit_now(self, make: Callable[..., Event], /, **fields: object) -> None:
        now = self._clock.now()
        self._calls.append((now, "emit", make(t=now, wall=self._clock.wall(), **fields)))

    async def nap(self, seconds: float | None) -> None:
        assert seconds is not None and seconds > 0
        await self._clock.sleep(seconds)

    async def launch(self, bundle: str, env: Mapping[str, str]) -> int:
        self._calls.append((self._clock.now(), "launch", bundle, dict(env)))
        if self._refuse:
            raise DeviceError("the phone is locked")
        if self._app is not None:
            asyncio.get_running_loop().create_task(self._app())
        return PROBE_PID

    async def terminate(self, pid: int) -> None:
        self._calls.append((self._clock.now(), "terminate", pid))


def test_the_fake_host_has_exactly_the_protocols_members():
    protocol = {name for name in vars(CooldownHost) if not name.startswith("_")}
    assert protocol == {"aborting", "telemetry", "set_phase", "emit_now", "nap", "launch",
                        "terminate"}  # fmt: skip
    assert {name for name in dir(FakeHost) if not name.startswith("_")} == protocol


Operator = Callable[[Cooldown, FakeHost], Awaitable[None]]


def cool(
    spec: CooldownSpec,
    *,
    lines: Sequence[tuple[float, Event]] = (),
    operator: Operator | None = None,
    probe: Probe | None = PROBE,
    last_trial: int | None = None,
    **host: object,
) -> tuple[list[tuple], Cooldown]:
    """Run one cooldown to its end; `lines` reach `observe` at their times after the probe's
    launch; `operator(cooldown, host)` runs beside it."""
    clock = VirtualClock(limit_s=3600)
    calls: list[tuple] = []

    async def main() -> Cooldown:
        cooldown: Cooldown

        async def app() -> None:
            started = clock.now()
            for at, event in lines:
                await clock.sleep(started + at - clock.now())
                cooldown.observe(event)

        fake = FakeHost(clock, calls, app=app, **host)
        cooldown = Cooldown(spec, ARM, fake, clock, probe=probe, last_trial=last_trial)
        if operator is not None:
            asyncio.get_running_loop().create_task(operator(cooldown, fake))
        await cooldown.run()
        return cooldown

    return calls, clock.run(main())


def steps(calls: list[tuple]) -> list[CooldownEvent]:
    return [call[2] for call in calls if call[1] == "emit"]


def called(calls: list[tuple], what: str) -> list[tuple]:
    return [call for call in calls if call[1] == what]


def idle(thermal: int) -> IdleEvent:
    return IdleEvent(t=0, wall=0, thermal=thermal)


V1 = CooldownSpec(min_s=30, until="none", cap_s=60)
V2 = CooldownSpec(min_s=30, until="fair", cap_s=120)


def test_by_time_alone_no_probe_is_launched_and_it_opens_at_min():
    calls, cooldown = cool(V1)
    assert called(calls, "phase") == [(0, "phase", "cooling", ARM, "at least 30 s, until none, "
                                                                   "cap 60 s")]  # fmt: skip
    assert not called(calls, "launch") and not called(calls, "terminate")
    events = steps(calls)
    assert [e.elapsed_s for e in events] == [0, 5, 10, 15, 20, 25, 30]
    assert [e.done for e in events] == [False] * 6 + [True]
    last = events[-1]
    assert (last.reason, last.basis, last.arm, last.source) == ("min", "time", ARM, "controller")
    assert (last.min_s, last.cap_s, last.until) == (30, 60, "none")
    assert cooldown.over


def test_every_step_is_stamped_with_session_time():
    calls, _ = cool(V1)
    assert all(t == e.t == e.elapsed_s for t, _, e in called(calls, "emit"))


def test_the_probes_idle_lines_open_the_gate_once_cool_and_the_probe_is_stopped():
    calls, cooldown = cool(V2, lines=[(3, idle(2)), (42, idle(1))])
    assert called(calls, "launch") == [(0, "launch", PROBE.bundle, dict(PROBE.env))]
    last = steps(calls)[-1]
    assert (last.elapsed_s, last.reason, last.basis, last.thermal) == (45, "cool", "app", 1)
    assert [e.thermal for e in steps(calls)][1:3] == [2, 2]  # serious after the first line
    assert called(calls, "terminate") == [(45, "terminate", PROBE_PID)]
    assert cooldown.idle_thermal == 1


def test_trial_lines_that_come_late_are_a_reading_too():
    late = TrialEvent(t=0, wall=0, thermal=1)
    calls, _ = cool(V2, lines=[(12, late)], last_trial=3)
    events = steps(calls)
    assert (events[0].thermal, events[0].basis) == (3, "app")  # the arm's last trial
    assert (events[-1].elapsed_s, events[-1].reason, events[-1].thermal) == (30, "cool", 1)


def test_a_refused_probe_goes_by_the_hosts_temperature():
    calls, _ = cool(V2, refuse=True, telemetry=Telemetry(temperature_c=33.0))
    phases = [call[4] for call in called(calls, "phase")]
    assert phases[1] == "no thermal probe (the phone is locked): host or time"
    last = steps(calls)[-1]
    assert (last.elapsed_s, last.reason, last.basis, last.thermal) == (30, "cool", "host", 1)
    assert not called(calls, "terminate")  # nothing was launched


def test_without_any_reading_it_waits_for_the_cap():
    calls, _ = cool(V2, probe=None)
    assert not called(calls, "launch")
    last = steps(calls)[-1]
    assert (last.elapsed_s, last.reason, last.basis) == (120, "cap", "time")


async def _after(seconds: float, action: Callable[[], object]) -> None:
    await asyncio.sleep(seconds)  # virtual time: the VirtualClock's loop
    action()


def test_skip_opens_it_at_the_next_step():
    calls, _ = cool(V2, operator=lambda c, h: _after(12, c.skip))
    last = steps(calls)[-1]
    assert (last.elapsed_s, last.reason) == (15, "skipped")


def test_extend_moves_min_and_cap():
    calls, _ = cool(V1, operator=lambda c, h: _after(12, lambda: c.extend(100)))
    last = steps(calls)[-1]
    assert (last.elapsed_s, last.reason, last.min_s, last.cap_s) == (130, "min", 130, 130)


def test_an_aborted_session_ends_it_at_the_next_step():
    async def abort(cooldown: Cooldown, host: FakeHost) -> None:
        await asyncio.sleep(7)
        host._aborting = True

    calls, cooldown = cool(V2, lines=[(1, idle(3))], operator=abort)
    last = steps(calls)[-1]
    assert (last.elapsed_s, last.reason, last.done) == (10, "aborted", True)
    assert called(calls, "terminate") == [(10, "terminate", PROBE_PID)]
    assert cooldown.over


def test_it_is_not_over_while_it_decides():
    seen: list[bool] = []

    async def look(cooldown: Cooldown, host: FakeHost) -> None:
        await asyncio.sleep(12)
        seen.append(cooldown.over)

    _, cooldown = cool(V1, operator=look)
    assert seen == [False] and cooldown.over
