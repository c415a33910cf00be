"""The "same key twice" rule for keys that end something: the first press only asks."""

from __future__ import annotations

import time
from collections.abc import Callable

WINDOW_S = 3.0
"""The second press must come within this many seconds of the first."""
END_THE_RUN = "end the run"
END_EVERY_RUN = "end every run"
"""What quitting does when several runs are shown (`anemon run A.toml B.toml`)."""


def quit_what(runs: int) -> str:
    """What the quit confirmation says quitting does, with `runs` runs on the dashboard."""
    return END_EVERY_RUN if runs > 1 else END_THE_RUN


class Confirm:
    """`press(key)` is True when the same key was pressed within `window_s` before (and then
    forgets it); otherwise it remembers this press and is False. Another key starts over."""

    def __init__(
        self, window_s: float = WINDOW_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.window_s = window_s
        self.clock = clock
        self._pending: tuple[str, float] | None = None

    def press(self, key: str) -> bool:
        now = self.clock()
        pending, self._pending = self._pending, None
        if pending is not None and pending[0] == key and now - pending[1] <= self.window_s:
            return True
        self._pending = (key, now)
        return False
