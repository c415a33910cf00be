"""When the dashboard redraws, and what: plain state and arithmetic, no Textual (tested alone).

The app's timer asks `round` each period whether anything is to be drawn; the pane draws the
panels, asking `table_due` for the arms table and `draw_charts` for the charts, which take
turns within a time budget. The app runs its timer at `period_s`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

TABLE_EVERY_S = 1.0
"""At most one arms-table update a second for new host readings alone (the per-arm summary is
the costliest panel); new records update it in the round that shows them."""
SETTLE_ROUNDS = 10
"""At most this many rounds after a change for the charts a round left past its budget;
none when nothing was left."""
ROUND_BUDGET_S = 0.03
"""Charts drawn in one round stop once it has taken this long (the rest go next round)."""
IDLE_AFTER_S = 2.0
"""Nothing changed for this long: the redraw timer slows to IDLE_REDRAW_S (a live session
between two trials wakes the process a few times a second for nothing otherwise)."""
IDLE_REDRAW_S = 1.0
"""The redraw timer's period while idle: the first change after a quiet spell that no event
brings shows within this (an event asks a round at once: `Dashboard._event_came`); any change,
or a key that redraws, brings the normal period back. 1 s, not 0.5: an idle watch's main
thread 0.07 % of a core instead of 0.10 (bench/terminal.py's idle row)."""

READINGS_EVERY_S = 3.0
"""The host's readings alone (power, telemetry, the app's process samples: about one a
second each) are drawn at most this often; a record, a marker or a phase at once. None is
dropped: the round that draws shows every reading that came. Each such round redraws the
status line, the charts they feed and the arms table (its energy figures), the dashboard's
main live cost once power and process samples come every second."""

C = TypeVar("C", bound=Hashable)
"""A chart (anything with an identity: its last draw's cost is kept by it)."""


class RedrawScheduler:
    """Budgets and pacing for the redraws of the run shown. `now` (pacing, the table's second)
    and `perf` (the round's budget) are injected for the tests."""

    def __init__(
        self,
        redraw_s: float,
        *,
        now: Callable[[], float] = time.monotonic,
        perf: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.redraw_s = redraw_s
        self.now = now
        self.perf = perf
        self.period_s = redraw_s
        """The redraw timer's period now: `redraw_s`, or IDLE_REDRAW_S while nothing changes."""
        self.quiet_since = now()
        self.table_at = float("-inf")
        self.table_owed = False
        """A change came while the table waited for its second: one round when it is up."""
        self.table_rows: Hashable = None
        """What the table's rows showed at its last turn (`table_due`)."""
        self.left = False
        """The last round left charts past its budget for the next."""
        self.began = perf()
        """The current round's start: what was drawn before the charts spends their budget."""
        self._seen: Hashable = None
        self._readings: Hashable = None
        """The host's readings as the last drawing round showed them."""
        self.readings_at = float("-inf")
        self._settling = 0
        self._next_chart = 0
        self._cost: dict[Hashable, float] = {}
        """Each chart's last draw that drew, in seconds: whether it fits a round's budget."""

    def shown(self) -> None:
        """Another run is shown (a tab): its first round draws, its charts from the first."""
        self._seen, self._next_chart = None, 0

    def round(self, seen: Hashable, force: bool = False, readings: Hashable = None) -> bool:
        """Whether this round draws: forced, news (`seen`: what the panels show but the host's
        readings, changed), work the last round left (for a few rounds at most), or new
        `readings` once READINGS_EVERY_S has passed since the last round that drew. Asked even
        when forced: what is drawn is seen. A round that does not draw slows the pace once
        there has been no news for IDLE_AFTER_S (readings alone do not keep it fast); news
        brings it back."""
        changed = self._changed(seen)
        due = readings != self._readings and self.now() - self.readings_at >= READINGS_EVERY_S
        if changed or force:
            self.quiet_since = self.now()
            self.period_s = self.redraw_s
        elif self.now() - self.quiet_since >= IDLE_AFTER_S:
            self.period_s = max(self.redraw_s, IDLE_REDRAW_S)
        if not (force or changed or due):
            return False
        self._readings, self.readings_at = readings, self.now()
        self.began = self.perf()
        return True

    def _changed(self, seen: Hashable) -> bool:
        """A live session between two trials, or one whose panels are all up to date, costs a
        comparison per tick."""
        if seen != self._seen:
            self._seen = seen
            self._settling = SETTLE_ROUNDS
            return True
        if self.table_owed and self.now() - self.table_at >= TABLE_EVERY_S:
            return True  # one round when the table's second is up, not a round per tick
        self._settling -= 1
        return self.left and self._settling >= 0

    def table_due(self, force: bool = False, rows: Hashable = None) -> bool:
        """The arms table's turn: whenever `rows` (what its rows show: the records, which the
        status line counts too) changed, so the two never say two versions of the session;
        else, for the host's readings alone (its energy figures), at most every
        TABLE_EVERY_S. One not due is owed a round."""
        due = force or rows != self.table_rows or self.now() - self.table_at >= TABLE_EVERY_S
        if due:
            self.table_at, self.table_rows = self.now(), rows
        self.table_owed = not due
        return due

    def draw_charts(self, charts: Sequence[C], draw: Callable[[C], bool], force: bool) -> None:
        """`draw` the charts whose data changed, starting where the last round stopped, until
        the round's budget is spent: a slow live session redraws them all at once (one screen
        update), a fast replay spreads them over rounds (the keys keep answering); `left` says
        whether some were left for the next round. A chart is started only if its last draw
        would still fit (a chart draws its canvases too: ~10-25 ms with 100k points); the
        round's first always is, so every chart comes round."""
        for k in range(len(charts)):
            chart = charts[(self._next_chart + k) % len(charts)]
            start = self.perf()
            if k and not force and start - self.began + self._cost.get(chart, 0.0) > ROUND_BUDGET_S:
                self._next_chart = (self._next_chart + k) % len(charts)
                self.left = True
                return
            if draw(chart):
                self._cost[chart] = self.perf() - start
        self._next_chart = 0
        self.left = False
