"""The arms table and the status line say the same version of the session: every round that
shows a new trial in the header shows it in the table too (pilot, trials faster than the
table's once-a-second pace for host readings)."""

from __future__ import annotations

import re

from anemon.events import StartEvent, TelemetryEvent, TrialEvent
from anemon.ui.arms_table import ArmsTable
from anemon.ui.status import StatusLine

from .helpers import MakeApp, live_feed


def header_trials(app: object) -> int:
    text = str(app.query_one(StatusLine).render())  # type: ignore[attr-defined]
    found = re.search(r"trials (\d+)", text)
    assert found, text
    return int(found.group(1))


def table_trials(table: ArmsTable) -> int:
    keys = [c.key.value for c in table.ordered_columns]
    return sum(
        int(table.get_row(row.key)[keys.index("trials")].plain) for row in table.rows.values()
    )


async def test_the_table_never_lags_the_header(make_app: MakeApp) -> None:
    feed = live_feed()
    app = make_app(feed=feed)
    emit = feed.pipeline.emit
    async with app.run_test(size=(120, 40)) as pilot:
        for arm, t0 in (("ane", 0.0), ("gpu", 100.0)):
            emit(StartEvent(t=t0, wall=t0, arm=arm, line=f"START arm={arm}"))
            for n in range(1, 8):
                t = t0 + 3.0 * n
                emit(TrialEvent(t=t, wall=t, arm=arm, trial=n, decode_tps=50.0, app_t=3.0 * n))
                emit(TelemetryEvent(t=t + 0.5, wall=t, power_w=4.0, plugged=False))
                app.redraw()  # a round, as the timer's: well within the table's second
                await pilot.pause()
                table = app.query_one("#arms", ArmsTable)
                assert table_trials(table) == header_trials(app) == feed.session.timed_trials
