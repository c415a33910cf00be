"""The RedrawScheduler alone: no app, a hand-moved clock (`now` for pacing and the table's
second, `perf` for the round's budget)."""

from __future__ import annotations

from anemon.ui.scheduler import (
    IDLE_AFTER_S,
    IDLE_REDRAW_S,
    READINGS_EVERY_S,
    ROUND_BUDGET_S,
    SETTLE_ROUNDS,
    TABLE_EVERY_S,
    RedrawScheduler,
)


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def scheduler() -> tuple[RedrawScheduler, Clock, Clock]:
    now, perf = Clock(), Clock()
    return RedrawScheduler(0.2, now=now, perf=perf), now, perf


def test_a_round_draws_only_on_news_or_when_forced() -> None:
    s, _, _ = scheduler()
    assert s.round(("session", 1))
    assert not s.round(("session", 1))
    assert s.round(("session", 1), force=True)
    assert s.round(("session", 2))


def test_quiet_for_long_enough_slows_the_pace_and_news_brings_it_back() -> None:
    s, now, _ = scheduler()
    s.round(1)
    now.t += IDLE_AFTER_S / 2
    assert not s.round(1) and s.period_s == 0.2
    now.t += IDLE_AFTER_S
    assert not s.round(1) and s.period_s == IDLE_REDRAW_S
    assert s.round(2) and s.period_s == 0.2


def test_the_table_is_due_once_a_second_and_owed_a_round_when_its_second_is_up() -> None:
    s, now, _ = scheduler()
    s.round(1)
    assert s.table_due()
    s.round(2)
    assert not s.table_due() and s.table_owed
    assert not s.round(2)  # owed, but its second is not up: nothing to draw
    now.t += TABLE_EVERY_S
    assert s.round(2)  # one round for the table
    assert s.table_due() and not s.table_owed
    assert not s.round(2)


def test_charts_take_turns_within_the_budget_and_every_one_comes_round() -> None:
    s, _, perf = scheduler()
    drawn: list[str] = []

    def draw(chart: str) -> bool:
        drawn.append(chart)
        perf.t += ROUND_BUDGET_S  # each chart spends a whole round's budget
        return True

    charts = ["a", "b", "c"]
    s.round(1)
    s.draw_charts(charts, draw, force=False)
    assert drawn == ["a"] and s.left  # the first always; the next would not fit
    for _ in range(2):
        assert s.round(1)  # what was left is drawn without news
        s.draw_charts(charts, draw, force=False)
    assert drawn == ["a", "b", "c"]  # one a round, each in its turn


def test_a_forced_round_draws_every_chart_and_a_shown_run_starts_from_the_first() -> None:
    s, _, perf = scheduler()
    drawn: list[str] = []

    def draw(chart: str) -> bool:
        drawn.append(chart)
        perf.t += ROUND_BUDGET_S
        return True

    s.round(1)
    s.draw_charts(["a", "b"], draw, force=False)
    s.shown()  # another tab: its first round draws, from its first chart
    assert s.round(1)
    s.draw_charts(["a", "b"], draw, force=True)
    assert drawn == ["a", "a", "b"] and not s.left


def test_work_left_settles_after_a_few_rounds_at_most() -> None:
    s, _, perf = scheduler()

    def draw(chart: str) -> bool:
        perf.t += ROUND_BUDGET_S
        return True

    charts = [str(n) for n in range(100)]  # always some left
    s.round(1)
    s.draw_charts(charts, draw, force=False)
    rounds = 0
    while s.round(1):
        s.draw_charts(charts, draw, force=False)
        rounds += 1
    assert rounds == SETTLE_ROUNDS


def test_the_table_is_due_at_once_for_new_records_and_paced_for_readings_alone() -> None:
    s, now, _ = scheduler()
    assert s.table_due(rows=1)
    assert s.table_due(rows=2)  # a new trial: the round that shows it in the header
    assert not s.table_due(rows=2) and s.table_owed  # a host reading alone: its second waits
    now.t += TABLE_EVERY_S
    assert s.table_due(rows=2)


def test_readings_alone_draw_at_their_own_pace_and_news_draws_them_at_once() -> None:
    s, now, _ = scheduler()
    assert s.round(1, readings=10)
    assert not s.round(1, readings=11)  # a reading a moment later waits
    now.t += READINGS_EVERY_S / 2
    assert not s.round(1, readings=12)
    now.t += READINGS_EVERY_S / 2
    assert s.round(1, readings=12)  # every reading that came, in one round
    assert not s.round(1, readings=12)  # drawn: nothing new
    now.t += 0.1
    assert s.round(2, readings=13)  # news draws at once, and the readings with it
    now.t += READINGS_EVERY_S / 2
    assert not s.round(2, readings=13)


def test_readings_alone_let_the_pace_slow_down() -> None:
    """A power reading every second must not keep the timer at its fast pace between trials."""
    s, now, _ = scheduler()
    s.round(1, readings=0)
    for reading in range(1, 4):
        now.t += 1.0
        s.round(1, readings=reading)
    assert now.t - 100.0 >= IDLE_AFTER_S and s.period_s == IDLE_REDRAW_S
    assert s.round(2, readings=3) and s.period_s == 0.2
