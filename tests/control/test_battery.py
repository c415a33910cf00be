"""The battery protocol (plan `protocol.battery`): its pure parts, then whole plans on the
simulator at max speed with a simulated operator who unplugs and replugs the phone."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from anemon.analysis.summary import summarize
from anemon.clock import Clock
from anemon.control.battery import (
    LATE_UNPLUG,
    NO_KEYS,
    REPLUG,
    UNPLUG,
    UNPLUG_TIMEOUT_S,
    USB_WARNING,
    Answer,
    BatteryProtocol,
    Prompt,
    Wait,
    expected_run_s,
    is_plugged,
    is_unplugged,
    replug_wait,
    unplug_wait,
)
from anemon.control.outcome import ABORTED, OK, UNANSWERED
from anemon.control.plan import Plan, ProtocolSpec, sim_config
from anemon.devices.base import Telemetry
from anemon.devices.sim import SimDevice
from anemon.events import (
    EndEvent,
    ErrorEvent,
    MarkerEvent,
    Phase,
    PhaseEvent,
    TelemetryEvent,
    TrialEvent,
)
from anemon.simulator import SimulatedIPhone
from tests.control.helpers import (
    TWO_ARMS,
    battery_operator,
    plan,
    prompted,
    run_plan,
    set_plugged,
)

ANE, GPU = "minicpm5_1b_ane_pal8", "minicpm5_1b_gpu_int8"
SHORT = '[protocol]\nseconds = 60\n[cooldown]\nmin_s = 30\nuntil = "none"\ncap_s = 60\n'
NETWORK = '[device]\nconnect = "network"\n'
UNPLUGGED = (
    TWO_ARMS + NETWORK + SHORT.replace("seconds = 60\n", 'seconds = 60\nbattery = "unplugged"\n')
)

UNPLUGGED_T = Telemetry(charging=False, plugged=False)
CHARGING_T = Telemetry(charging=True, plugged=True)
FULL_T = Telemetry(charging=False, plugged=True)


# -- the pure parts ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reading", "usb", "unplugged", "plugged"),
    [
        (UNPLUGGED_T, False, True, False),
        (UNPLUGGED_T, True, True, False),
        (CHARGING_T, False, False, True),
        (FULL_T, True, False, True),  # plugged in, held at its charge limit: not charging
        (Telemetry(charging=True, plugged=None), False, False, True),
        (Telemetry(), False, False, False),  # nothing known
        (None, True, True, False),  # over USB, a phone out of reach is a phone unplugged
        (None, False, False, False),  # over the network it must say so itself
    ],
)
def test_what_counts_as_unplugged_and_as_plugged(reading, usb, unplugged, plugged):
    assert is_unplugged(reading, usb=usb) is unplugged
    assert is_plugged(reading) is plugged


def test_a_launch_is_expected_to_last_its_seconds_or_an_ab_estimate():
    assert expected_run_s(ProtocolSpec(seconds=300)) == 300
    assert expected_run_s(ProtocolSpec(kind="ab", trials=5)) == 300


def test_the_closing_note_says_how_the_wait_ended_and_after_how_long():
    wait = unplug_wait(observable=True, usb=False, kind="sim")
    assert Answer("unplugged", 31.6).note(wait) == "unplug wait: unplugged after 32 s"
    late = Answer("skipped (k)", 700.2, timed_out=True).note(wait)
    assert late == "unplug wait: skipped (k) after 700 s (timed out at 600 s)"


def test_a_host_that_cannot_read_the_cable_asks_for_k():
    seen = unplug_wait(observable=True, usb=False, kind="sim")
    assert (seen.prompt, seen.timeout_s, seen.late) == (UNPLUG, UNPLUG_TIMEOUT_S,
                                                        LATE_UNPLUG.format(s=600))  # fmt: skip
    assert seen.late == "still charging after 600 s: go on with k or --force, or abort with X"
    blind = unplug_wait(observable=False, usb=True, kind="devicectl")
    assert blind.done is None
    assert blind.prompt.startswith(UNPLUG + ", then press k: devicectl cannot tell")
    assert replug_wait(observable=True, kind="sim").prompt == REPLUG
    assert "then press k" in replug_wait(observable=False, kind="devicectl").prompt
    # what a view reads of the wait while it lasts (`Controller.prompt`): typed, not prose
    assert seen.asked == Prompt(UNPLUG, keys_only=False)
    assert blind.asked == Prompt(blind.prompt, keys_only=True)


class FakeBatteryHost:
    """Exactly BatteryHost's members; the operator does as asked at once."""

    def __init__(self, reading: Telemetry | None) -> None:
        self._reading = reading
        self.calls: list[tuple] = []

    @property
    def aborting(self) -> bool:
        return False

    async def reading(self) -> Telemetry | None:
        return self._reading

    async def ask(self, wait: Wait) -> Answer:
        self.calls.append(("ask", wait.prompt))
        return Answer(wait.then, 0.0)

    def set_phase(self, phase: Phase, arm: str | None, reason: str = "") -> None:
        self.calls.append(("phase", phase, reason))

    def note(self, text: str) -> None:
        self.calls.append(("note", text))


def before(mode: str, reading: Telemetry | None, *, usb: bool = False) -> list[tuple]:
    host = FakeBatteryHost(reading)
    battery = BatteryProtocol(mode, host, usb=usb, kind="devicectl", observable=reading is not None)
    asyncio.run(battery.before())
    return host.calls


def test_any_does_nothing():
    assert before("any", CHARGING_T) == []


@pytest.mark.parametrize(
    ("reading", "says"),
    [
        (CHARGING_T, "the phone is plugged in"),
        (UNPLUGGED_T, "warning: the phone is not plugged in"),
        (None, "not checked, the host reads no charging state (devicectl)"),
    ],
)
def test_plugged_checks_and_warns(reading, says):
    ((what, note),) = before("plugged", reading)
    assert what == "note" and note == 'battery protocol "plugged": ' + says + (
        " (not charging); the run goes on" if "warning" in says else ""
    )


def test_unplugged_shows_the_prompt_as_the_phase_and_asks():
    calls = before("unplugged", CHARGING_T)
    assert calls == [("phase", "idle", UNPLUG), ("ask", UNPLUG)]
    usb = before("unplugged", CHARGING_T, usb=True)
    assert usb[0] == ("note", USB_WARNING)


# -- whole plans on the simulator -----------------------------------------------------------------


def markers(ran, start=""):
    return [m for m in ran.of(MarkerEvent) if m.note.startswith(start)]


def closing(ran, name):
    (note,) = markers(ran, f"{name} wait: ")
    return note


def waited(note):
    return float(note.note.split(" after ")[1].split(" s")[0])


def first_phase(ran, phase, arm=None):
    return next(e for e in ran.of(PhaseEvent) if e.phase == phase and (arm is None or e.arm == arm))


def test_unplugged_asks_waits_for_the_unplug_then_asks_for_the_replug_after_the_last_arm():
    ran = run_plan(
        plan(UNPLUGGED),
        operator=battery_operator(unplug_after_s=30, replug_after_s=20),
        sim_operator=False,
    )
    assert ran.result.exit_status == OK
    assert [o.status for o in ran.result.outcomes] == ["done", "done"]

    # Before the first arm: the prompt (the phase's reason, a marker), the wait, its ending.
    asked = markers(ran, UNPLUG)[0]
    assert asked.source == "prompt" and asked.t < 1
    assert first_phase(ran, "idle").reason == UNPLUG
    unplugged = closing(ran, "unplug")
    assert unplugged.note.startswith("unplug wait: unplugged after ")
    assert 30 <= waited(unplugged) <= 33
    assert first_phase(ran, "launching", ANE).t >= unplugged.t
    # Telemetry is read every 2 s while waiting (10 s otherwise).
    read = [e.t for e in ran.of(TelemetryEvent) if e.source == "controller" and e.t <= unplugged.t]
    assert max(b - a for a, b in itertools.pairwise(read)) <= 2.01

    # Unplugged, the phone says so and drains; the log is still pulled over the network.
    (replug,) = markers(ran, REPLUG)
    phone = [e for e in ran.of(TelemetryEvent) if e.source != ran.feed.controller.app_source]
    during = [e for e in phone if unplugged.t < e.t <= replug.t]  # not the app's process
    assert during and all(e.plugged is False and e.charging is False for e in during)
    assert len({e.arm for e in during}) == 3  # ANE, the cooldown, GPU
    assert during[-1].battery < during[0].battery

    # After the last arm: the replug, until the phone is back on the cable.
    last_end = max(e.t for e in ran.of(EndEvent))
    assert replug.source == "prompt" and replug.t >= last_end
    replugged = closing(ran, "replug")
    assert 20 <= waited(replugged) <= 23
    done = ran.of(PhaseEvent)[-1]
    assert done.phase == "done" and done.t > replugged.t
    assert [e.reason for e in ran.of(PhaseEvent) if e.phase == "idle"][-1] == REPLUG
    assert not ran.of(ErrorEvent)


def test_a_timeout_says_so_and_k_goes_on():
    async def late_k(feed):
        await prompted(feed, "unplug")
        await feed.clock.sleep(700)
        await feed.controller.skip_cooldown()

    ran = run_plan(plan(UNPLUGGED), operator=late_k, sim_operator=False)
    (error,) = ran.of(ErrorEvent)
    assert error.message == "still charging after 600 s: go on with k or --force, or abort with X"
    assert error.t == pytest.approx(600, abs=0.1) and error.arm is None
    assert [m.note for m in markers(ran, "k: ")] == ["k: go on (unplug wait)"]
    skipped = closing(ran, "unplug")
    assert skipped.note.startswith("unplug wait: skipped (k) after 70")
    assert skipped.note.endswith("(timed out at 600 s)")
    assert first_phase(ran, "launching", ANE).t >= 700
    assert ran.result.exit_status == OK
    # Still plugged in: the replug is asked for, and done at once.
    assert closing(ran, "replug").note == "replug wait: replugged after 0 s"


def test_force_goes_on_at_the_timeout():
    ran = run_plan(plan(UNPLUGGED), force=True, sim_operator=False)
    (error,) = ran.of(ErrorEvent)
    assert error.message.startswith("still charging after 600 s")
    forced = closing(ran, "unplug")
    assert forced.note == "unplug wait: forced (--force) after 600 s (timed out at 600 s)"
    assert first_phase(ran, "launching", ANE).t == pytest.approx(600, abs=1)
    assert ran.result.exit_status == OK


def test_an_abort_ends_the_wait_and_nothing_is_launched():
    async def abort(feed):
        await prompted(feed, "unplug")
        await feed.clock.sleep(50)
        await feed.controller.abort_session()

    ran = run_plan(plan(UNPLUGGED), operator=abort, sim_operator=False)
    assert closing(ran, "unplug").note.startswith("unplug wait: aborted after 5")
    assert ran.result.exit_status == ABORTED and ran.result.skipped == (ANE, GPU)
    assert not [e for e in ran.of(PhaseEvent) if e.phase == "launching"]
    assert not markers(ran, "replug")


def test_over_usb_the_replug_is_asked_when_the_arm_should_be_over_and_the_log_pulled_after():
    """Over USB an unplugged phone cannot be pulled, so its arm cannot end: the replug is
    asked for when the arm should be over (its 60 s and a 60 s margin), beside it."""
    one_arm = f'tag = "usb"\n[[arms]]\nname = "{ANE}"\n'
    text = one_arm + '[protocol]\nseconds = 60\nbattery = "unplugged"\n'

    async def operate(feed):
        await prompted(feed, "unplug")
        await feed.controller.skip_cooldown()  # goes on, and unplugs once the arm runs
        while feed.controller.phase != "running":
            await feed.clock.sleep(1)
        await feed.clock.sleep(10)
        set_plugged(feed, False)
        await prompted(feed, "replug")
        await feed.clock.sleep(20)
        set_plugged(feed, True)

    ran = run_plan(plan(text), operator=operate, sim_operator=False)
    assert ran.result.exit_status == OK
    assert USB_WARNING in [m.note for m in ran.of(MarkerEvent)]
    launched = first_phase(ran, "launching", ANE).t
    (replug,) = markers(ran, REPLUG)
    assert replug.t == pytest.approx(launched + 120, abs=2)
    begin, end = ran.log_gaps()
    assert begin.t < replug.t < end.t
    (ended,) = ran.of(EndEvent)
    shown = [e.t for e in ran.of(PhaseEvent) if e.reason == REPLUG]
    assert all(t >= ended.t for t in shown)  # the arm's phases stay while it runs
    replugged = closing(ran, "replug")
    assert 20 <= waited(replugged) <= 23
    # The log written while unplugged is pulled after the replug, and the arm ends then.
    late = [e for e in ran.of(TrialEvent) if e.t >= end.t]
    assert late and ended.t >= end.t > replug.t


def test_plugged_warns_when_the_phone_does_not_charge():
    text = TWO_ARMS + NETWORK + '[protocol]\nseconds = 60\nbattery = "plugged"\n'
    ran = run_plan(plan(text, s="[sim]\nplugged = false\n"))
    (warning,) = markers(ran, 'battery protocol "plugged"')
    assert "warning: the phone is not plugged in" in warning.note
    assert ran.result.exit_status == OK
    assert not markers(ran, UNPLUG)
    ok = run_plan(plan(TWO_ARMS + '[protocol]\nseconds = 60\nbattery = "plugged"\n'))
    assert [m.note for m in markers(ok, "battery")] == [
        'battery protocol "plugged": the phone is plugged in'
    ]


def test_any_asks_nothing():
    ran = run_plan(plan(TWO_ARMS, s=SHORT))
    assert not [m for m in ran.of(MarkerEvent) if m.source == "prompt"]
    assert not markers(ran, "battery")


def test_the_protocol_asks_once_even_for_an_arm_with_the_unplug_fault():
    fault = f'[sim.arms.{ANE}]\nfault = "unplug"\nfault_at_s = 20\n'
    ran = run_plan(plan(UNPLUGGED, f=fault), operator=battery_operator(), sim_operator=False)
    assert len(markers(ran, UNPLUG)) == 1 and len(markers(ran, REPLUG)) == 1
    assert ran.result.exit_status == OK


# -- the simulator as the operator; waits nobody can end ------------------------------------------

OPERATED = "simulated operator: unplugs the phone in 5 s"


@pytest.mark.parametrize("connect", ["usb", "network"])
def test_the_simulator_unplugs_and_replugs_itself_and_the_run_ends_with_energy(connect):
    """Nobody pulls a simulated cable: asked, the simulator does it itself. It used to wait for
    an operator forever (virtual time ran out: VirtualTimeExceeded)."""
    text = UNPLUGGED.replace(NETWORK, f'[device]\nconnect = "{connect}"\n')
    ran = run_plan(plan(text), keys=False)
    assert ran.result.exit_status == OK and not ran.of(ErrorEvent)
    operated = [m.note for m in markers(ran, "simulated operator: ")]
    link = " (its USB link stays in: the host still reaches it)" if connect == "usb" else ""
    assert operated == [OPERATED + link, "simulated operator: plugs the phone back in in 5 s"]
    assert closing(ran, "unplug").note == "unplug wait: unplugged after 6 s"
    assert closing(ran, "replug").note == "replug wait: replugged after 6 s"
    # Unplugged, the host still reads power over either link: every arm has its J/token.
    arms = summarize(ran.session)
    assert [a.arm for a in arms] == [ANE, GPU]
    assert all(isinstance(a.j_per_token, float) and a.j_per_token > 0 for a in arms)
    # Two 60 s arms, a cooldown of at most 60 s and the two waits: nothing ran on.
    assert ran.events[-1].t < 300


class _Blind(SimDevice):
    """A phone whose host reads no charging state (as devicectl): only k says it was done."""

    kind = "devicectl"

    async def telemetry(self) -> Telemetry | None:
        return None


def blind(the_plan: Plan, clock: Clock) -> SimDevice:
    return _Blind(SimulatedIPhone(sim_config(the_plan)), clock, bundle=the_plan.app.bundle)


def test_headless_a_wait_only_k_can_end_stops_the_session_at_once_with_exit_2():
    """Nothing reads k headless: the wait is not waited for (it waited on virtual time until
    the clock ran out, 337,000 s at the command line)."""
    ran = run_plan(plan(UNPLUGGED), device=blind, keys=False)
    assert ran.result.exit_status == UNANSWERED == 2
    said = NO_KEYS.format(name="unplug", kind="devicectl")
    assert said.startswith("the unplug wait ends only with k (devicectl cannot tell")
    ((error),) = ran.of(ErrorEvent)
    assert error.message == f"{said}: run without --headless, or with --force to go on at once"
    assert closing(ran, "unplug").note == "unplug wait: unanswered (no k headless) after 0 s"
    assert ran.result.outcomes == () and ran.result.skipped == (ANE, GPU)
    assert "launching" not in [e.phase for e in ran.of(PhaseEvent)] and not markers(ran, "replug")
    assert ran.feed.controller.stopped == error.message
    assert ran.events[-1].t < 10  # virtual time did not run on


def test_headless_force_goes_on_at_once_from_a_wait_only_k_can_end():
    ran = run_plan(plan(UNPLUGGED), device=blind, keys=False, force=True)
    assert ran.result.exit_status == OK
    assert closing(ran, "unplug").note == "unplug wait: forced (--force) after 0 s"
    assert closing(ran, "replug").note == "replug wait: forced (--force) after 0 s"
    going_on = [m.note for m in markers(ran, "the unplug wait ends only with k")]
    assert going_on == [
        NO_KEYS.format(name="unplug", kind="devicectl") + ": going on at once (--force)"
    ]
    assert first_phase(ran, "launching", ANE).t < 10


def test_in_the_dashboard_k_still_confirms_a_wait_only_k_can_end():
    async def confirm(feed):
        await prompted(feed, "unplug")
        await feed.clock.sleep(40)
        await feed.controller.skip_cooldown()
        await prompted(feed, "replug")
        await feed.controller.skip_cooldown()

    ran = run_plan(plan(UNPLUGGED), device=blind, operator=confirm)
    assert ran.result.exit_status == OK
    assert 40 <= waited(closing(ran, "unplug")) <= 42
    assert closing(ran, "unplug").note.startswith("unplug wait: confirmed (k) after ")
    assert closing(ran, "replug").note.startswith("replug wait: confirmed (k) after ")


def test_over_usb_a_phone_out_of_reach_from_the_start_is_unplugged_and_fails_pre_flight():
    """The simulator reads the cable: a phone it cannot reach is not one it "cannot tell"
    about (it asked for a k nobody could press, on virtual time); over USB it is unplugged,
    and a phone the host cannot reach fails the pre-flight: exit 1, nothing launched."""
    usb = UNPLUGGED.replace(NETWORK, "")
    ran = run_plan(plan(usb, s="[sim]\nplugged = false\n"), keys=False)
    assert [m.note for m in markers(ran, UNPLUG)] == [UNPLUG]
    assert closing(ran, "unplug").note == "unplug wait: unplugged after 0 s"
    assert ran.result.exit_status == 1 and ran.result.outcomes == ()
    assert (
        "pre-flight failed (device: the host cannot reach the phone" in ran.feed.controller.stopped
    )
    assert ran.events[-1].t < 60
