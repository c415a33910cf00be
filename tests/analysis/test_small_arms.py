"""Arms of fewer than `SMALL` trials are figured on Python lists (issue 21: a log of thousands
of one-trial arms spent its summary in numpy's cost per call): every figure is the very float
numpy gives, so the JSON is the same bytes. Seeded sessions of hostile small arms (signed
zeros, NaN, ties, warm-ups, several rounds, charging, power readings around the spans)."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from anemon.analysis import render, summary
from anemon.analysis.load import load_sessions
from anemon.analysis.summary import SMALL, summarize
from anemon.events import Event, LoadEvent, StartEvent, TelemetryEvent, TrialEvent
from anemon.store import Session

from ..many_arms import write_many_arms

RECORDINGS = Path(__file__).parents[2] / "recordings"
VALUES = (0.0, -0.0, 1.0, 1.0, 2.5, 1e-7, 3e15, 17.25, 0.1, 0.2, 0.3, 99.9, float("nan"))
"""Decode, prefill and battery values whose sums round, tie and carry a sign of zero."""


def numpy_json(session: Session, monkeypatch: pytest.MonkeyPatch) -> str:
    """The summary's JSON with every arm figured by numpy, however small."""
    with monkeypatch.context() as patch:
        patch.setattr(summary, "SMALL", 0)
        return render.to_json(summarize(session))


def hostile_session(seed: int) -> Session:
    rng = random.Random(seed)
    events: list[Event] = []
    t = 0.0
    for index in range(60):
        arm = f"a{rng.randrange(max(1, index // 3))}"  # arms come back: several rounds
        t += rng.choice((0.0, 1.0, 5.0))
        events.append(StartEvent(t=t, wall=t, arm=arm, line="START"))
        if rng.random() < 0.5:
            events.append(LoadEvent(t=t + 0.5, wall=t, arm=arm, line="LOAD"))
        for trial in range(rng.randrange(SMALL)):
            t += rng.choice((0.0, 0.5, 30.0, 70.0, 200.0))
            value = rng.choice
            events.append(TrialEvent(
                t=t, wall=t, arm=arm, trial=trial, warmup=rng.random() < 0.2,
                app_t=value((None, t, t - 0.25)), decode_tps=value((*VALUES, None)),
                prompt_tps=value((*VALUES, None)), gen=value((0, 256, 1, None)),
                battery=value((90.0, 89.0, 88.5, -0.0, None)), thermal=value((0, 1, 2, 3, None)),
                battery_state=value((None, "unplugged", "charging", "full")),
            ))  # fmt: skip
            if rng.random() < 0.4:
                events.append(TelemetryEvent(
                    t=t + rng.choice((-0.5, 0.0, 0.5)), wall=t, power_w=value((1.5, 3.0, None)),
                    charging=rng.random() < 0.1, battery=value((90.0, 87.0, None)),
                ))  # fmt: skip
    return Session.from_events(events)


@pytest.mark.parametrize("seed", range(40))
def test_small_arms_on_lists_are_numpys_figures(seed: int, monkeypatch) -> None:
    session = hostile_session(seed)
    assert any(0 < len(arm) < SMALL for arm in session.arms.values())
    assert render.to_json(summarize(session)) == numpy_json(session, monkeypatch)


@pytest.mark.parametrize("recording", sorted(RECORDINGS.glob("*.jsonl")), ids=lambda p: p.name)
def test_the_sample_recordings_summaries_do_not_depend_on_the_path(recording, monkeypatch):
    """Sample recordings: their arms are large, each round figured as numpy's; the same bytes
    with every arm forced onto numpy (and the many-arms log, every arm small)."""
    session = next(load_sessions([recording])).session
    assert render.to_json(summarize(session)) == numpy_json(session, monkeypatch)


def test_a_log_of_one_trial_arms_is_figured_as_numpy_figures_it(tmp_path, monkeypatch) -> None:
    session = next(load_sessions([write_many_arms(tmp_path / "arms.log", 300)])).session
    assert render.to_json(summarize(session)) == numpy_json(session, monkeypatch)


def test_numpy_sums_fewer_than_small_values_left_to_right() -> None:
    """The premise of `SMALL` (numpy's pairwise summation starts at 8): if a numpy release
    changes it, this fails, and SMALL must come down."""
    rng = random.Random(0)
    for count in range(1, SMALL):
        for _ in range(2000):
            values = [rng.choice((-0.0, 0.0, rng.uniform(-1e3, 1e3) * 10 ** rng.randint(-9, 9)))
                      for _ in range(count)]  # fmt: skip
            assert repr(summary.total(values)) == repr(float(np.array(values).sum()))
