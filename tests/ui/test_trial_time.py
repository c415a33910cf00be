"""A trial is placed on the session's axis by the app's own time: its launch's START plus its
`t=` since, so a mirror read in batches draws a smooth curve; the chart, the arms table's
"serious at" and the export say the same time for every trial."""

from __future__ import annotations

import numpy as np
import pytest

from anemon.analysis.export import export_table
from anemon.analysis.summary import summarize
from anemon.events import StartEvent, TrialEvent
from anemon.store import Session
from anemon.store.session import LEAD_S
from anemon.ui.charts.specs import CHARTS
from anemon.ui.series import column


def start(t: float, app_t: float | None = None) -> StartEvent:
    return StartEvent(t=t, wall=t, arm="a", line="START arm=a", app_t=app_t)


def trial(t: float, n: int, app_t: float | None, thermal: int = 1) -> TrialEvent:
    return TrialEvent(t=t, wall=t, arm="a", trial=n, app_t=app_t, decode_tps=50.0 - n,
                      thermal=thermal)  # fmt: skip


def mirrored(every_s: float = 10.0) -> Session:
    """A START read at 10 s, then a trial every 3 s of the app's time, read in batches when
    the mirror is pulled every `every_s`; serious from the 6th trial on."""
    session = Session.from_events([start(10.0)])
    for n in range(1, 21):
        read = 10.0 + every_s * np.ceil(3.0 * n / every_s)
        session.add(trial(read, n, app_t=3.0 * n, thermal=2 if n >= 6 else 1))
    return session


def test_trials_read_in_batches_are_drawn_at_the_apps_time() -> None:
    session = mirrored()
    (line,) = CHARTS["decode"].lines(session)
    assert np.allclose(np.diff(line.x), 3.0)  # one step, not a stair every pull
    assert line.x[0] == pytest.approx(3.0)  # since the session's first event, the START


def test_chart_table_and_export_agree_on_every_trials_time() -> None:
    session = mirrored()
    (line,) = CHARTS["decode"].lines(session)
    exported = export_table(session, "trials")["placed_t"].to_numpy()
    assert np.allclose(exported - session.first_t, line.x)
    (arm,) = summarize(session)
    placed = column(session.arms["a"].columns["placed_t"])
    assert arm.serious_at_s == pytest.approx(placed[5] - 10.0)  # since the START, at 10 s


@pytest.mark.parametrize(
    ("events", "placed"),
    [
        ([trial(20.0, 1, app_t=None)], [20.0]),
        ([start(10.0), trial(20.0, 1, app_t=None)], [20.0]),
        ([start(10.0, app_t=100.0), trial(20.0, 1, app_t=103.0)], [13.0]),
        ([start(10.0), trial(20.0, 1, app_t=6.0), trial(20.0, 2, app_t=4.0)], [16.0, 20.0]),
        ([start(10.0), trial(20.0, 1, app_t=10.0 + LEAD_S + 5)], [20.0]),
        ([start(10.0), trial(30.0, 1, app_t=15.0), start(40.0), trial(50.0, 1, app_t=2.0)],
         [25.0, 42.0]),
    ],
    ids=["no START", "no t=", "START with t=", "t= goes back", "t= far ahead", "relaunched"],
)  # fmt: skip
def test_without_a_usable_app_time_a_trial_is_placed_when_it_was_read(
    events: list[StartEvent | TrialEvent], placed: list[float]
) -> None:
    session = Session.from_events(events)
    assert column(session.arms["a"].columns["placed_t"]).tolist() == placed
