"""Launch refusals: what a real launch refusal looks like, and when the phone gives one."""

from __future__ import annotations

from anemon.simulator.config import SimArmConfig, SimConfig

CORE_DEVICE_LAUNCH_FAILED = 10002
INSTALL_SETTLE_S = 8.0
"""After an install, launches are refused this long (the scripts slept ~10 s)."""


class SimLaunchRefused(Exception):
    """The launch died before the app printed anything (CoreDeviceError 10002)."""

    def __init__(
        self,
        code: int = CORE_DEVICE_LAUNCH_FAILED,
        reason: str = "",
        *,
        transient: bool = True,
        detail: str = "",
    ) -> None:
        self.code = code
        self.reason = reason
        self.transient = transient
        text = f"CoreDeviceError {self.code}" + (f" ({reason})" if reason else "")
        super().__init__(f"{text}: {detail}" if detail else text)


class LaunchGate:
    """Decides whether a launch is refused: lock, install settling, busy, injected faults."""

    def __init__(self, config: SimConfig) -> None:
        self.locked = config.locked
        self._installed_at: float | None = None
        self._busy_until = float("-inf")
        self._attempts: dict[str, int] = {}
        self._first_attempt: dict[str, float] = {}

    def installed(self, now: float) -> None:
        self._installed_at = now

    def busy_for(self, now: float, seconds: float) -> None:
        self._busy_until = max(self._busy_until, now + seconds)

    def check(self, now: float, name: str | None, arm: SimArmConfig | None) -> None:
        """Raise SimLaunchRefused if a launch of the arm `name` (None: no arm) is refused
        now; `arm` is its settings (None: AB_MODEL names no profile)."""
        if self.locked:
            raise SimLaunchRefused(reason="Locked", transient=False, detail="unlock the phone")
        if self._installed_at is not None and now - self._installed_at < INSTALL_SETTLE_S:
            raise SimLaunchRefused(detail="the app was just installed; retry in a few seconds")
        if now < self._busy_until:
            raise SimLaunchRefused(reason="Busy", detail="Application failed preflight checks")
        if name is not None:
            self._check_arm(now, name, arm)

    def _check_arm(self, now: float, name: str, arm: SimArmConfig | None) -> None:
        attempt = self._attempts.get(name, 0) + 1
        self._attempts[name] = attempt
        first = self._first_attempt.setdefault(name, now)
        if arm is None:
            return
        if arm.fault == "refuse_launch" and attempt <= arm.fault_count:
            raise SimLaunchRefused(detail="The operation couldn't be completed")
        if arm.fault == "busy" and now - first < arm.fault_at_s:
            raise SimLaunchRefused(reason="Busy", detail="Application failed preflight checks")
