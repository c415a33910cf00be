"""What the app is given at launch (docs/spec/line-protocol.md), which arm its lines are
taken for, and how refusals are retried."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from anemon.control.plan import ArmSpec, Plan
from anemon.events import EndEvent, RecordEvent, StartEvent
from anemon.text import printable

BACKOFF_FIRST_S = 5.0
BACKOFF_MAX_S = 120.0
IDLE_INTERVAL_S = 5.0
"""How often the cooldown probe (AB_MODE=idle) writes an IDLE line."""


def _number(value: float) -> str:
    return f"{value:g}"


def app_env(plan: Plan, arm: ArmSpec) -> dict[str, str]:
    """The environment of one launch of an arm; the arm's own `env` wins on a clash."""
    protocol = plan.protocol
    env = {
        "AB_ARM": arm.name,
        "AB_MODEL": arm.name,
        "AB_TAG": plan.tag,
        "AB_LOG": plan.log_path,
        "AB_MODE": protocol.kind,
        "AB_SECONDS": _number(protocol.seconds),
        "AB_TRIALS": str(protocol.trials),
        "AB_PROMPT": str(protocol.prompt),
        "AB_GEN": str(protocol.gen),
    }
    return env | dict(arm.env)


@dataclass(frozen=True, slots=True)
class _Launched:
    arm: str
    """The plan arm's name."""
    says: frozenset[str]
    """What its lines' `arm=` may be: the AB_ARM and AB_MODEL it was given."""


class Attribution:
    """Which plan arm each line of the app's log belongs to: the arm of the launch that wrote
    it, whatever its `arm=` says (two arms may give the app one AB_MODEL; an app may ignore
    AB_ARM). The log is one file, written in launch order: a launch's lines begin at its START
    line; the lines before it are the previous launch's (its process stopped, its log pulled
    late), unless that launch's END was read or none has begun, or the line names the new
    launch and not the previous one: then they are the new launch's (a failure before START).
    Before the first launch, lines keep their own arm."""

    def __init__(self) -> None:
        self._current: _Launched | None = None
        self._ended = True
        """The current launch wrote its END: the app has exited (or no launch has begun)."""
        self._next: _Launched | None = None
        """Launched, but none of its lines read yet."""

    def launched(self, arm: str, env: Mapping[str, str]) -> None:
        """The app is being launched as the plan arm `arm`, with `env` (app_env)."""
        says = (env.get(key) for key in ("AB_ARM", "AB_MODEL"))
        self._next = _Launched(arm, frozenset(printable(name) for name in says if name))

    def arm_of(self, event: RecordEvent) -> str | None:
        """The arm `event`, the next line of the log, belongs to."""
        if self._next is not None and self._begins(self._next, event):
            self._current, self._next, self._ended = self._next, None, False
        if self._current is None:
            return event.arm
        self._ended = self._ended or isinstance(event, EndEvent)
        return self._current.arm

    def _begins(self, launched: _Launched, event: RecordEvent) -> bool:
        """`event` is the first line of `launched`, not one more of the current launch's."""
        current = self._current
        if current is None or self._ended or isinstance(event, StartEvent):
            return True
        return event.arm in launched.says and event.arm not in current.says


def probe_env(plan: Plan) -> dict[str, str]:
    """The thermal probe during a cooldown: no model, an IDLE line every few seconds."""
    return {
        "AB_MODE": "idle",
        "AB_TAG": plan.tag,
        "AB_LOG": plan.log_path,
        "AB_INTERVAL": _number(IDLE_INTERVAL_S),
    }


def backoff_s(retry: int) -> float:
    """The wait before retry number `retry` (1-based): 5, 10, 20, 40, 80, 120, 120 ... s."""
    return min(BACKOFF_FIRST_S * 2 ** (retry - 1), BACKOFF_MAX_S)
