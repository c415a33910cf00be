"""A chart's lines kept as trials come (`ArmLines`, `SessionLine`) equal the lines built
afresh from the session's columns at every draw."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from anemon.events import Event, StartEvent, TrialEvent
from anemon.store import ArmSeries, Session
from anemon.ui.charts import specs
from anemon.ui.charts.specs import ArmLines, Line, SessionLine
from anemon.ui.series import SHOWN_ARMS, column, runs


def built_afresh(session: Session, arm: ArmSeries, name: str) -> Line:
    """The line from the arm's columns as they are (how each draw built it before)."""
    timed = column(arm.columns["warmup"]) == 0
    x = column(arm.columns["placed_t"])[timed] - (session.first_t or 0.0)
    launches = runs(column(arm.columns["round"])[timed])[1:]
    breaks = x[[launch.start for launch in launches]]
    return Line(x, column(arm.columns[name])[timed], specs.arm_colour(session, arm.name),
                arm.name, breaks=breaks)  # fmt: skip


def assert_same(got: list[Line], session: Session, name: str) -> None:
    arms = [arm for arm in session.recent_arms(SHOWN_ARMS) if len(arm)]
    assert len(got) == len(arms)
    for line, arm in zip(got, arms, strict=True):
        want = built_afresh(session, arm, name)
        assert (line.colour, line.label) == (want.colour, want.label)
        for a, b in ((line.x, want.x), (line.y, want.y), (line.breaks, want.breaks)):
            np.testing.assert_array_equal(a, b)


@st.composite
def sessions(draw: st.DrawFn) -> list[list[Event]]:
    """Batches of events: launches and trials of a few arms, warm-ups, gaps in `t=`, None."""
    batches: list[list[Event]] = []
    t = 0.0
    for _ in range(draw(st.integers(1, 8))):
        batch: list[Event] = []
        for _ in range(draw(st.integers(0, 80))):
            t += draw(st.floats(0.0, 5.0))
            arm = draw(st.sampled_from("abc"))
            if draw(st.integers(0, 9)) == 0:
                batch.append(StartEvent(t=t, wall=t, arm=arm, line=f"START arm={arm}"))
                continue
            decode = draw(st.one_of(st.floats(0, 100), st.none()))
            batch.append(TrialEvent(t=t, wall=t, arm=arm, trial=len(batch), decode_tps=decode,
                                    prompt_tps=draw(st.one_of(st.floats(0, 900), st.none())),
                                    app_t=draw(st.one_of(st.floats(0, 500), st.none())),
                                    warmup=draw(st.booleans()),
                                    thermal=draw(st.sampled_from((0, 1, 2, 3, None)))))  # fmt: skip
        batches.append(batch)
    return batches


@settings(max_examples=150, deadline=None)
@given(sessions(), st.booleans())
def test_kept_lines_equal_lines_built_afresh_after_every_batch(
    batches: list[list[Event]], one_by_one: bool
) -> None:
    session, decode, prefill = Session(), ArmLines("decode_tps"), ArmLines("prompt_tps")
    for batch in batches:
        if one_by_one:
            for event in batch:
                session.add(event)
        else:
            session.extend(batch)  # a seek: runs of trials a column at a time
        assert_same(decode(session), session, "decode_tps")
        assert_same(prefill(session), session, "prompt_tps")


def test_a_new_session_s_arm_of_the_same_name_starts_its_line_afresh() -> None:
    """A seek back: a new Session, new arms (an arm's id may be a freed one's)."""
    lines = ArmLines("decode_tps")
    for start in (0.0, 1000.0):
        session = Session()
        for i in range(5):
            session.add(TrialEvent(t=start + i, wall=0.0, arm="a", trial=i, decode_tps=10.0 + i))
        assert_same(lines(session), session, "decode_tps")


def test_the_lines_kept_are_bounded(monkeypatch) -> None:
    monkeypatch.setattr(specs, "KEPT_LINES", 3)
    lines = ArmLines("decode_tps")
    sessions_seen = []  # each alive: the lines kept go by count, not by the arms' lives
    for n in range(6):
        session = Session()
        session.add(TrialEvent(t=float(n), wall=0.0, arm="a", trial=0, decode_tps=math.pi))
        sessions_seen.append(session)
        assert_same(lines(session), session, "decode_tps")
    assert len(lines) == 3


def assert_thermal_line(got: list[Line], session: Session) -> None:
    """(Views of the session's columns die with this call: a column exporting a buffer
    cannot grow.)"""
    t = column(session.thermal.t)
    assert len(got) == 1
    np.testing.assert_array_equal(got[0].x, t - (session.first_t or 0.0))
    np.testing.assert_array_equal(got[0].y, column(session.thermal.value))
    assert got[0].step


@settings(max_examples=100, deadline=None)
@given(sessions(), st.booleans())
def test_a_session_line_kept_equals_it_shifted_afresh(
    batches: list[list[Event]], one_by_one: bool
) -> None:
    session, thermal = Session(), SessionLine("thermal", specs.THERMAL, step=True)
    session.add(TrialEvent(t=0.0, wall=0.0, arm="a", trial=0, thermal=1))
    for batch in batches:
        for event in batch if one_by_one else ():
            session.add(event)
        if not one_by_one:
            session.extend(batch)
        assert_thermal_line(thermal(session), session)
