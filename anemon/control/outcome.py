"""How each launch of an arm ended, and what the run's exit status is (docs/spec/plan.md)."""

from __future__ import annotations

from dataclasses import dataclass

OK, FAILED, ABORTED = 0, 1, 130


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

    @property
    def failures(self) -> tuple[ArmOutcome, ...]:
        return tuple(o for o in self.outcomes if o.status != "done")

    @property
    def exit_status(self) -> int:
        if self.aborted:
            return ABORTED
        return FAILED if self.failures or self.skipped else OK
