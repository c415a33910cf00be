"""The watchdogs of one launch: a first trial by `first_trial_s` ("dead, not slow"), then a
new log line at least every `stall_s`. Both are suspended while the log cannot be pulled."""

from __future__ import annotations


class Watchdog:
    """Deadlines in session seconds, fed with what the arm's log shows."""

    def __init__(self, started: float, first_trial_s: float, stall_s: float) -> None:
        self.started = started
        self.first_trial_s = first_trial_s
        self.stall_s = stall_s
        self.trialled = False
        self.last_line = started
        self._gap_since: float | None = None
        self._gap_total = 0.0

    def line(self, t: float) -> None:
        self.last_line = t

    def trial(self, t: float) -> None:
        self.trialled = True
        self.last_line = t

    def gap(self, state: str, t: float) -> None:
        """The log became unreachable ("begin") or reachable again ("end")."""
        if state == "begin" and self._gap_since is None:
            self._gap_since = t
        elif state == "end" and self._gap_since is not None:
            self._gap_total += t - self._gap_since
            self._gap_since = None
            self.last_line = max(self.last_line, t)  # silence while away proves nothing

    def deadline(self) -> float | None:
        """When the arm is declared dead if nothing comes; None while in a gap."""
        if self._gap_since is not None:
            return None
        if not self.trialled:
            return self.started + self.first_trial_s + self._gap_total
        return self.last_line + self.stall_s

    def reason(self) -> str:
        if not self.trialled:
            return f"no first trial after {self.first_trial_s:g} s: the arm is dead, not slow"
        return f"no new log line for {self.stall_s:g} s: stalled"
