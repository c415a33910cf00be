"""The battery protocol (plan `protocol.battery`, docs/domain.md "Energy"): energy is only
measured unplugged, so the operator unplugs the phone before the first arm and plugs it back
in after the last one; anemon asks, and waits until the phone reports it was done.

A `Wait` is one such request; the controller's `ask` shows it and waits (the same wait serves
the simulator's `unplug` fault prompts of an arm run). `BatteryProtocol` makes the protocol's
requests through the few things its `BatteryHost` lends it.

- `unplugged`: before the first arm "unplug the phone now", until the host reads that it is
  neither charging nor plugged in (over USB: until the host cannot reach it any more); after
  UNPLUG_TIMEOUT_S an error says so and the wait goes on until the operator goes on anyway
  (`k`), aborts, or at once with `--force`. When the last arm should be over (or is), "replug
  the phone now", until the host reads it plugged in again: the log is pulled after that. A
  backend that reads no telemetry (devicectl) cannot see the cable: the operator confirms
  each step with `k`. A backend that plays the operator (the simulator, `Operator`) is told
  each request and does it itself a few seconds later, so a run on it ends on its own.
- A wait only `k` can end (the host cannot see the cable) is never waited for where nothing
  reads keys (headless): it says so at once and the session ends (exit 2), or with
  `--force` it goes on at once, as the timeout would. So no wait for a person runs on a
  virtual clock (`--speed max` is headless), where its timeout would pass in no time.
- `plugged`: before the first arm, a marker warns when the phone is not plugged in.
- `any`: nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from anemon.control.plan import ProtocolSpec
from anemon.devices.base import Telemetry
from anemon.events import Phase

UNPLUG_TIMEOUT_S = 600.0
"""How long the unplug wait lasts before it says the phone still charges (no plan key)."""
REPLUG_TIMEOUT_S = 600.0
"""How long the replug wait lasts before it says the phone is still not plugged in."""
REPLUG_MARGIN_S = 60.0
"""Ask for the replug this long after the arm should have finished."""
AB_TRIAL_ESTIMATE_S = 60.0
"""An A/B launch's length is not known ahead: this much per trial (and its warm-up)."""

UNPLUG = "unplug the phone now (battery protocol)"
UNPLUG_CONFIRM = (
    "unplug the phone now (battery protocol), then press k: {kind} cannot tell whether it is "
    "plugged in"
)
REPLUG = "replug the phone now (battery protocol): the log is pulled once it is back"
REPLUG_CONFIRM = (
    "replug the phone now (battery protocol), then press k: {kind} cannot tell whether it is "
    "plugged in; the log is pulled after that"
)
LATE_UNPLUG = "still charging after {s:g} s: go on with k or --force, or abort with X"
LATE_REPLUG = (
    "still not plugged in after {s:g} s: the log is pulled once it is; "
    "go on with k or --force, or abort with X"
)
LATE_CONFIRM = (
    "no k after {s:g} s: press k once the phone is {then} (or to go on anyway), or abort with X"
)
USB_WARNING = (
    'battery protocol over USB (device.connect = "usb"): once the cable is out the host may not '
    'reach the phone to launch or pull; device.connect = "network" keeps it reachable'
)

NO_KEYS = (
    "the {name} wait ends only with k ({kind} cannot tell whether the phone is plugged in), "
    "and headless nothing reads keys"
)
SIMULATED_OPERATOR = "simulated operator"
"""The source of the marker in which a backend that plays the operator (`Operator`) says what
it does: the dashboard toasts it, so a first-time user sees nobody is asked to do anything."""

FORCED = "forced (--force)"
UNANSWERED = "unanswered (no k headless)"

Ending = str
"""How a wait ended: its `then` (the phone did it), "confirmed (k)", "skipped (k)", FORCED,
UNANSWERED or "aborted"."""


@dataclass(frozen=True, slots=True)
class Wait:
    """One request to the operator, and how to tell it was done."""

    name: str
    """What is waited for, in the closing marker ("unplug wait: ...")."""
    prompt: str
    """Shown (the controller's `prompt`) and recorded as a marker."""
    then: str
    """The ending once it is done: "unplugged", "replugged"."""
    done: Callable[[Telemetry | None], bool] | None
    """Whether host telemetry says it was done; None: the host cannot tell, `k` confirms."""
    timeout_s: float | None = None
    """After this long, `late` is reported (an error) and `--force` goes on."""
    late: str = ""
    cable: bool | None = None
    """What is asked of the cable (False: out, True: back in), for a backend that plays the
    operator; None: nothing it should do (the `unplug` fault pulls the cable itself)."""

    @property
    def asked(self) -> Prompt:
        """The wait as a view shows it while it lasts."""
        return Prompt(self.prompt, keys_only=self.done is None)


@dataclass(frozen=True, slots=True)
class Prompt:
    """What the operator is being asked now (`Controller.prompt`), for a view: the question,
    and what ends the wait besides an abort (X)."""

    question: str
    """As the `Wait` says it ("unplug the phone now (battery protocol)")."""
    keys_only: bool
    """Only k ends it (the host cannot tell whether it was done: k confirms); False: the
    phone's telemetry ends it, or k goes on without it."""


@dataclass(frozen=True, slots=True)
class Answer:
    """How a wait ended, and after how long."""

    ending: Ending
    waited_s: float
    timed_out: bool = False

    @property
    def went_on(self) -> bool:
        """The run goes on after it (it was not aborted, nor left unanswered)."""
        return self.ending not in ("aborted", UNANSWERED)

    def note(self, wait: Wait) -> str:
        """The closing marker: "unplug wait: unplugged after 32 s"."""
        late = f" (timed out at {wait.timeout_s:g} s)" if self.timed_out else ""
        return f"{wait.name} wait: {self.ending} after {self.waited_s:.0f} s{late}"


def is_unplugged(telemetry: Telemetry | None, *, usb: bool) -> bool:
    """Neither charging nor plugged in. Over USB a phone the host cannot reach any more is
    unplugged (the cable is its only link); over the network it must say so itself."""
    if telemetry is None:
        return usb
    return telemetry.plugged is False and telemetry.charging is not True


def is_plugged(telemetry: Telemetry | None) -> bool:
    """Plugged in or charging, as the host reads it."""
    return telemetry is not None and (telemetry.plugged is True or telemetry.charging is True)


def expected_run_s(protocol: ProtocolSpec) -> float:
    """How long one launch should run: a sustained arm's seconds, or an estimate for A/B."""
    if protocol.kind == "ab":
        return protocol.trials * AB_TRIAL_ESTIMATE_S
    return protocol.seconds


def unplug_wait(*, observable: bool, usb: bool, kind: str) -> Wait:
    """Unplug before the first arm (observable: the host reads the charging state)."""
    late = LATE_UNPLUG if observable else LATE_CONFIRM
    return Wait(
        name="unplug",
        prompt=UNPLUG if observable else UNPLUG_CONFIRM.format(kind=kind),
        then="unplugged",
        done=(lambda t: is_unplugged(t, usb=usb)) if observable else None,
        timeout_s=UNPLUG_TIMEOUT_S,
        late=late.format(s=UNPLUG_TIMEOUT_S, then="unplugged"),
        cable=False,
    )


def replug_wait(*, observable: bool, kind: str) -> Wait:
    """Replug after the last arm; the log is pulled after it."""
    late = LATE_REPLUG if observable else LATE_CONFIRM
    return Wait(
        name="replug",
        prompt=REPLUG if observable else REPLUG_CONFIRM.format(kind=kind),
        then="replugged",
        done=is_plugged if observable else None,
        timeout_s=REPLUG_TIMEOUT_S,
        late=late.format(s=REPLUG_TIMEOUT_S, then="plugged back in"),
        cable=True,
    )


class BatteryHost(Protocol):
    """What the battery protocol needs from the controller running it, and nothing more."""

    @property
    def aborting(self) -> bool: ...

    async def reading(self) -> Telemetry | None:
        """Host telemetry read now (and recorded); None: the host cannot read it."""
        ...

    async def ask(self, wait: Wait) -> Answer:
        """Show `wait.prompt` and wait until it is done, confirmed, skipped, forced or aborted."""
        ...

    def set_phase(self, phase: Phase, arm: str | None, reason: str = "") -> None: ...

    def note(self, text: str) -> None:
        """A marker of the controller's."""
        ...


class BatteryProtocol:
    """`protocol.battery` for one run: `before()` the first arm, `replug()` after the last.

    `usb`: the host reaches the phone over the cable (`device.connect`); `kind`: the backend,
    named in the prompts when it cannot read the charging state; `observable`: it can (a
    phone it cannot reach then reads as none: over USB, unplugged).
    """

    def __init__(
        self, mode: str, host: BatteryHost, *, usb: bool, kind: str, observable: bool
    ) -> None:
        self.mode = mode
        self.host = host
        self.usb = usb
        self.kind = kind
        self.observable = observable
        self.unplugged = False
        """The unplug wait ended with the run going on: a replug is due after the last arm."""
        self.replugged = False

    async def before(self) -> None:
        """Before the first arm: the unplug wait (unplugged) or the plugged check."""
        if self.mode == "any":
            return
        reading = await self.host.reading()
        if self.mode == "plugged":
            self._check_plugged(reading)
            return
        if self.usb and self.observable:
            self.host.note(USB_WARNING)
        wait = unplug_wait(observable=self.observable, usb=self.usb, kind=self.kind)
        self.host.set_phase("idle", None, wait.prompt)
        answer = await self.host.ask(wait)
        self.unplugged = answer.went_on

    async def replug(self, *, arms_over: bool) -> None:
        """Ask for the replug, once; `arms_over`: no arm runs (the phase may show it)."""
        if not self.unplugged or self.replugged or self.host.aborting:
            return
        self.replugged = True
        wait = replug_wait(observable=self.observable, kind=self.kind)
        if arms_over:
            self.host.set_phase("idle", None, wait.prompt)
        await self.host.ask(wait)

    def _check_plugged(self, reading: Telemetry | None) -> None:
        checked = 'battery protocol "plugged"'
        if reading is None:
            why = (
                "cannot reach the phone"
                if self.observable
                else f"reads no charging state ({self.kind})"
            )
            self.host.note(f"{checked}: not checked, the host {why}")
        elif is_plugged(reading):
            self.host.note(f"{checked}: the phone is plugged in")
        else:
            self.host.note(f"{checked}: warning: the phone is not plugged in (not charging); "
                           "the run goes on")  # fmt: skip
