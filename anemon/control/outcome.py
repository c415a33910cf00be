"""How each launch of an arm ended, and what the run's exit status is (docs/spec/plan.md)."""

from __future__ import annotations

from dataclasses import dataclass

from anemon.errors import USAGE

OK, FAILED, ABORTED = 0, 1, 130
UNANSWERED = USAGE
"""A wait only k could end came where nothing reads keys: the command cannot run as given."""


@dataclass(frozen=True, slots=True)
class ArmOutcome:
    arm: str
    round: int
    """1-based launch number of this arm (A-B-A-B: rounds)."""
    status: str
    """"done", "failed" (an error, a watchdog, a guard) or "aborted" (the operator)."""
    reason: str = ""

    def describe(self) -> str:
        where = f"{self.arm}" + (f" (round {self.round})" if self.round > 1 else "")
        return f"{where}: {self.status}" + (f": {self.reason}" if self.reason else "")


@dataclass(frozen=True, slots=True)
class RunResult:
    outcomes: tuple[ArmOutcome, ...]
    aborted: bool = False
    """The operator aborted the session (signal, abort key, quit)."""
    skipped: tuple[str, ...] = ()
    """Arms never launched (the session was aborted, or on_error = "abort")."""
    unanswered: bool = False
    """A wait only k could end came headless, where nothing reads keys: the session ended."""

    @property
    def failures(self) -> tuple[ArmOutcome, ...]:
        return tuple(o for o in self.outcomes if o.status != "done")

    @property
    def exit_status(self) -> int:
        if self.aborted:
            return ABORTED
        if self.unanswered:
            return UNANSWERED
        return FAILED if self.failures or self.skipped else OK
