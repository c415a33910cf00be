"""Free disk and the on-device compile caches (a cold cache eats disk as it compiles)."""

from __future__ import annotations

from dataclasses import dataclass

GB = 1_000_000_000


@dataclass(frozen=True, slots=True)
class Compile:
    """A cold load in progress: `gb` written linearly from `start` to `end`."""

    arm: str
    gb: float
    start: float
    end: float

    def written_gb(self, now: float) -> float:
        if self.end <= self.start:
            return self.gb
        return self.gb * min(max((now - self.start) / (self.end - self.start), 0.0), 1.0)


class Disk:
    """Free bytes, which arms have a warm compile cache, and compiles in progress."""

    def __init__(self, free_gb: float, total_gb: float, cold_cache: bool) -> None:
        self.total_bytes = int(total_gb * GB)
        self._free_gb = free_gb
        self._cold = cold_cache
        self._warm: set[str] = set()
        self._compiling: dict[str, Compile] = {}

    def is_cold(self, arm: str) -> bool:
        return self._cold and arm not in self._warm

    def invalidate(self) -> None:
        """An OS update: every compile cache goes cold (their old files stay: dead cache)."""
        self._cold = True
        self._warm.clear()

    def begin_compile(self, compile_: Compile) -> None:
        self._compiling[compile_.arm] = compile_

    def finish_compile(self, arm: str, now: float) -> None:
        """The compile completed: its cache is warm from now on."""
        self._settle(arm, now)
        self._warm.add(arm)

    def abort_compile(self, arm: str, now: float) -> None:
        """Killed mid-compile: what it wrote stays, the cache stays cold."""
        self._settle(arm, now)

    def _settle(self, arm: str, now: float) -> None:
        c = self._compiling.pop(arm, None)
        if c is not None:
            self._free_gb -= c.written_gb(now)

    def free_gb(self, now: float) -> float:
        return max(0.0, self._free_gb - sum(c.written_gb(now) for c in self._compiling.values()))

    def free_bytes(self, now: float) -> int:
        return int(self.free_gb(now) * GB)
