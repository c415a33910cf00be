"""The sustained figures of the per-arm summary (line-protocol.md "Sustained and energy figures
(summary version 2)"): burst_tps, sustained_tps, retained_pct, fade_X_s, serious_frac and
cooldown_s. Every expectation is computed here, from the generated log's own numbers, with
`statistics.median` and plain loops (`expect`), never with anemon's code."""

from __future__ import annotations

import json
import math
import random
import statistics
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anemon.analysis import sustained as sustained_module
from anemon.analysis.summary import ArmSummary, summarize
from anemon.events import CooldownEvent, Event, PhaseEvent, StartEvent, TrialEvent
from anemon.recording.reader import open_source
from anemon.store import Session

FIGURES = ("burst_tps", "sustained_tps", "retained_pct", "fade_10_s", "fade_25_s", "fade_50_s",
           "serious_frac")  # fmt: skip
THERMAL = ("nominal", "fair", "serious", "critical")


@dataclass(frozen=True)
class Trial:
    """One TRIAL line as the test writes it (None: the key is left out or unparsable)."""

    t: float | None
    decode: float | None
    thermal: int | None = 1
    warmup: bool = False


def lines(arm: str, trials: list[Trial], *, numeric_thermal: bool = False) -> str:
    """A launch of `arm`: START, then a TRIAL line per trial (decode "n/a" where missing)."""
    out = [f"START arm={arm} compute=ane mode=sustain"]
    for i, tr in enumerate(trials):
        parts = [f"TRIAL arm={arm} trial={i} warmup={int(tr.warmup)}"]
        if tr.t is not None:
            parts.append(f"t={tr.t}")
        parts.append(f"decode_tps={'n/a' if tr.decode is None else tr.decode} gen=256")
        if tr.thermal is not None:
            thermal = str(tr.thermal) if numeric_thermal else THERMAL[tr.thermal]
            parts.append(f"thermal={thermal}")
        out.append(" ".join(parts))
    out.append(f"END arm={arm} reason=done trials={len(trials)}")
    return "\n".join(out) + "\n"


def summaries_of(text: str, tmp_path: Path) -> list[ArmSummary]:
    path = tmp_path / "bench.log"
    path.write_text(text)
    return summarize(Session.from_events(open_source(path)))


def one_arm(trials: list[Trial], tmp_path: Path, **kw: bool) -> ArmSummary:
    (summary,) = summaries_of(lines("a", trials, **kw), tmp_path)
    return summary


def expect(trials: list[Trial]) -> dict[str, float | None]:
    """The rules, written out plainly over one round's trials (each with its own `t`)."""
    timed = [tr for tr in trials if not tr.warmup]
    t0 = timed[0].t
    assert t0 is not None
    el = [tr.t - t0 for tr in timed if tr.t is not None]
    with_decode = [(tr.t - t0, tr.decode) for tr in timed if tr.decode is not None and tr.t]
    values = [v for _, v in with_decode]
    burst_set = [v for e, v in with_decode if e <= 60]
    burst = statistics.median(burst_set) if burst_set else None
    largest = max(el)
    plateau = [v for e, v in with_decode if e >= largest - 120]
    sustained = statistics.median(plateau) if largest >= 180 and plateau else None
    retained = (
        round(100 * sustained / burst, 1) if sustained is not None and burst is not None else None
    )
    fades: dict[str, float | None] = {}
    for x in (10, 25, 50):
        fades[f"fade_{x}_s"] = None
        if burst is None:
            continue
        for i, (e, _) in enumerate(with_decode):
            if statistics.median(values[i : i + 5]) <= (1 - x / 100) * burst:
                fades[f"fade_{x}_s"] = round(e, 1)
                break
    thermals = [tr.thermal for tr in timed if tr.thermal is not None]
    serious = round(sum(th >= 2 for th in thermals) / len(thermals), 3) if thermals else None
    return {"burst_tps": burst, "sustained_tps": sustained, "retained_pct": retained,
            **fades, "serious_frac": serious}  # fmt: skip


def figures(summary: ArmSummary) -> dict[str, float | None]:
    return {key: getattr(summary, key) for key in FIGURES}


def assert_figures(summary: ArmSummary, expected: dict[str, float | None]) -> None:
    got = figures(summary)
    for key, want in expected.items():
        if want is None:
            assert got[key] is None, key
        else:
            assert got[key] == pytest.approx(want, rel=1e-12, abs=1e-9), key


def sustained_run(minutes: float, burst: float, plateau: float, *, step: float = 5.0,
                  half_life_s: float = 120.0, hold_s: float = 0.0, start_t: float = 7.3,
                  seed: int = 1) -> list[Trial]:  # fmt: skip
    """A warm-up, then a trial every `step` s for `minutes`, decode at `burst` for `hold_s`,
    then falling toward `plateau` (exponentially, with noise), thermal climbing with time."""
    rng = random.Random(seed)
    trials = [Trial(start_t - 4.0, burst * 1.1, 0, warmup=True)]
    n = int(minutes * 60 / step) + 1
    for i in range(n):
        el = i * step
        level = plateau + (burst - plateau) * 0.5 ** (max(el - hold_s, 0) / half_life_s)
        decode = round(level * (1 + rng.uniform(-0.02, 0.02)), 2)
        thermal = 1 if el < 90 else 2 if el < 400 else 3
        trials.append(Trial(round(start_t + el + rng.uniform(-0.2, 0.2), 3), decode, thermal))
    return trials


# -- the rules, one by one ------------------------------------------------------------------


def test_a_ten_minute_sustained_arm(tmp_path):
    trials = sustained_run(10, burst=75.0, plateau=50.0)
    summary = one_arm(trials, tmp_path)
    want = expect(trials)
    assert want["sustained_tps"] is not None and want["fade_10_s"] is not None
    assert want["fade_50_s"] is None  # 75 -> 50 never halves
    assert_figures(summary, want)


def test_the_public_anchor_ane_33_to_22_retains_about_67_percent(tmp_path):
    """iPhone 17 Pro, ANE: 33 -> 22 tok/s over 10 min, 67 % retained, -10 % after 93 s."""
    trials = sustained_run(10, burst=33.0, plateau=22.0, half_life_s=30.0, hold_s=75.0, step=4.5)
    summary = one_arm(trials, tmp_path)
    assert_figures(summary, expect(trials))
    assert summary.burst_tps == pytest.approx(33, abs=0.5)
    assert summary.sustained_tps == pytest.approx(22, abs=0.5)
    assert summary.retained_pct == pytest.approx(67, abs=2)
    assert summary.fade_10_s is not None and 75 <= summary.fade_10_s <= 110


def test_an_arm_shorter_than_180_s_has_no_sustained_figure(tmp_path):
    trials = [Trial(10.0 + 5 * i, 40.0 - i, 1) for i in range(35)]  # el 0..170
    summary = one_arm(trials, tmp_path)
    assert summary.sustained_tps is None and summary.retained_pct is None
    assert summary.burst_tps == statistics.median([40.0 - i for i in range(13)])  # el <= 60
    assert_figures(summary, expect(trials))


def test_at_exactly_180_s_the_plateau_is_the_last_120_s(tmp_path):
    trials = [Trial(2.0 + 10 * i, 30.0 - i / 2, 1) for i in range(19)]  # el 0..180
    summary = one_arm(trials, tmp_path)
    assert summary.sustained_tps == statistics.median([30.0 - i / 2 for i in range(6, 19)])
    assert_figures(summary, expect(trials))


def test_missing_decode_values_count_for_el_not_for_medians(tmp_path):
    """The first timed trial has no decode: `el` still starts at it; the last trial has none
    either: the arm still ran that long (so the plateau reaches back from it)."""
    trials = [Trial(100.0, None, 1)]
    trials += [Trial(100.0 + 6 * i, 60.0 - 0.1 * i if i % 7 else None, 1) for i in range(1, 40)]
    trials.append(Trial(100.0 + 6 * 40, None, 2))
    summary = one_arm(trials, tmp_path)
    burst_set = [60.0 - 0.1 * i for i in range(1, 11) if i % 7]  # el 6..60
    assert summary.burst_tps == statistics.median(burst_set)
    plateau = [60.0 - 0.1 * i for i in range(20, 40) if i % 7]  # el >= 240 - 120
    assert summary.sustained_tps == statistics.median(plateau)
    assert_figures(summary, expect(trials))


def test_an_even_count_takes_the_mean_of_the_two_middle_values(tmp_path):
    trials = [Trial(0.5 + 20 * i, d, 1) for i, d in enumerate([10.0, 40.0, 20.0, 30.0])]
    summary = one_arm(trials, tmp_path)
    assert summary.burst_tps == 25.0  # el 0, 20, 40, 60: (20 + 30) / 2


def test_several_rounds_the_figures_are_over_the_first(tmp_path):
    first = sustained_run(4, burst=50.0, plateau=30.0, seed=2)
    second = sustained_run(4, burst=90.0, plateau=10.0, start_t=3.0, seed=3)
    text = lines("a", first) + lines("b", first) + lines("a", second)
    a, b = summaries_of(text, tmp_path)
    assert len(a.rounds) == 2 and a.trials == 2 * (len(first) - 1)
    assert_figures(a, expect(first))
    assert figures(a) == figures(b)


def test_thermal_given_as_numbers(tmp_path):
    thermals = [0, 1, 2, 3, 2, None, 1, 3]
    trials = [Trial(1.0 + 5 * i, 20.0, th) for i, th in enumerate(thermals)]
    summary = one_arm(trials, tmp_path, numeric_thermal=True)
    assert summary.serious_frac == round(4 / 7, 3) == 0.571
    named = one_arm(trials, tmp_path)
    assert named.serious_frac == summary.serious_frac


def test_no_thermal_at_all_gives_no_serious_frac(tmp_path):
    summary = one_arm([Trial(1.0 + i, 20.0, None) for i in range(5)], tmp_path)
    assert summary.serious_frac is None


def test_a_fade_that_never_happens_is_null(tmp_path):
    trials = [Trial(3.0 + 5 * i, 40.0 + (i % 3) * 0.5, 1) for i in range(80)]
    summary = one_arm(trials, tmp_path)
    assert (summary.fade_10_s, summary.fade_25_s, summary.fade_50_s) == (None, None, None)
    assert summary.retained_pct is not None
    assert_figures(summary, expect(trials))


def test_a_fade_in_the_last_windows_of_fewer_than_5_trials(tmp_path):
    """Steady at 40, then the last two trials at 10: every full window (5 trials) has a
    median of 40; only the windows that run past the end are lower."""
    decodes = [40.0] * 20 + [10.0, 10.0]
    trials = [Trial(1.0 + 4.5 * i, d, 1) for i, d in enumerate(decodes)]
    summary = one_arm(trials, tmp_path)
    assert statistics.median(decodes[17:22]) == 40.0  # the last full window
    assert statistics.median(decodes[18:]) == 25.0  # 4 trials: under 36 and 30, not 20
    assert (summary.fade_10_s, summary.fade_25_s) == (4.5 * 18, 4.5 * 18)
    assert summary.fade_50_s == 4.5 * 19  # [40, 10, 10]
    assert_figures(summary, expect(trials))
    decodes = [40.0] * 21 + [10.0]  # the last window is one trial
    trials = [Trial(1.0 + 4.5 * i, d, 1) for i, d in enumerate(decodes)]
    summary = one_arm(trials, tmp_path)
    assert (summary.fade_10_s, summary.fade_25_s) == (4.5 * 20, 4.5 * 20)  # [40, 10]: 25
    assert summary.fade_50_s == 4.5 * 21
    assert_figures(summary, expect(trials))


def test_fade_times_have_one_decimal(tmp_path):
    trials = [Trial(0.123 + 5.037 * i, 100.0 - 3 * i, 1) for i in range(30)]
    summary = one_arm(trials, tmp_path)
    for key in ("fade_10_s", "fade_25_s", "fade_50_s"):
        value = getattr(summary, key)
        assert value is not None and value == round(value, 1)
    assert_figures(summary, expect(trials))


def test_warmups_are_not_timed_trials(tmp_path):
    """A warm-up at 200 tok/s, 50 s before the first timed trial: neither in the burst nor
    the origin of `el`."""
    trials = [Trial(1.0, 200.0, 0, warmup=True)]
    trials += [Trial(51.0 + 10 * i, 30.0 - i, 1) for i in range(30)]
    summary = one_arm(trials, tmp_path)
    assert summary.burst_tps == statistics.median([30.0 - i for i in range(7)])
    assert_figures(summary, expect(trials))


def test_without_t_the_session_time_is_used():
    """A trial without its own `t=` (app_t null): `el` is the session time."""
    events: list[Event] = [StartEvent(t=0.0, wall=0.0, arm="a")]
    decodes = [50.0 - i for i in range(40)]
    for i, decode in enumerate(decodes):
        t = 20.0 + 7.0 * i  # el 0..273
        events.append(TrialEvent(t=t, wall=t, arm="a", trial=i, decode_tps=decode, thermal=1))
    (summary,) = summarize(Session.from_events(events))
    assert summary.burst_tps == statistics.median(decodes[:9])  # el 0..56
    assert summary.sustained_tps == statistics.median(decodes[22:])  # el >= 273 - 120: 154..
    own = [Trial(20.0 + 7.0 * i, d, 1) for i, d in enumerate(decodes)]
    assert_figures(summary, expect(own))


def test_an_arm_with_no_timed_trial_has_only_nulls(tmp_path):
    summary = one_arm([Trial(1.0, 50.0, 1, warmup=True)], tmp_path)
    assert set(figures(summary).values()) == {None}
    assert summary.cooldown_s is None


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(0.5, 20.0),
            st.one_of(st.none(), st.floats(1.0, 100.0).map(lambda x: round(x, 2))),
            st.one_of(st.none(), st.integers(0, 3)),
        ),
        min_size=1,
        max_size=60,
    ),
    st.integers(1, 8),
)
def test_property_the_figures_follow_the_rules(steps, chunk):
    """Random arms (gaps, missing decodes and thermals) against the plain reading of the
    rules; a small chunk makes the fade search cross its chunks' edges."""
    trials, t = [], 3.0
    for gap, decode, thermal in steps:
        trials.append(Trial(round(t, 3), decode, thermal))
        t += gap * 5
    events: list[Event] = [StartEvent(t=0.0, wall=0.0, arm="a")]
    for i, tr in enumerate(trials):
        events.append(TrialEvent(t=1000.0 + i, wall=0.0, arm="a", trial=i, app_t=tr.t,
                                 decode_tps=tr.decode, thermal=tr.thermal))  # fmt: skip
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sustained_module, "_CHUNK", chunk)
        (summary,) = summarize(Session.from_events(events))
    assert_figures(summary, expect(trials))


def test_a_long_arm_whose_fade_comes_after_the_first_chunk(tmp_path):
    decodes = [60.0 + (i % 5) * 0.1 for i in range(1500)] + [20.0] * 20
    trials = [Trial(2.0 + 0.5 * i, d, 1) for i, d in enumerate(decodes)]
    summary = one_arm(trials, tmp_path)
    assert summary.fade_50_s == round(0.5 * 1498, 1)  # [60.x, 60.x, 20, 20, 20]
    assert_figures(summary, expect(trials))


@given(st.lists(st.integers(-3, 3).map(float), min_size=5, max_size=40))
def test_window_medians_are_numpys(values):
    """The elementwise median of each window of five is np.median's, ties and signs of zero
    included (small integers make many ties)."""
    array = np.array(values)
    expected = [float(np.median(array[i : i + 5])) for i in range(len(values) - 4)]
    assert sustained_module.window_medians(array).tolist() == expected


# -- cooldown_s -----------------------------------------------------------------------------


def cooldown(t: float, arm: str, elapsed: float, done: bool = False) -> CooldownEvent:
    return CooldownEvent(t=t, wall=t, arm=arm, source="controller", elapsed_s=elapsed,
                         min_s=180.0, cap_s=600.0, until="fair", done=done,
                         reason="cool" if done else "")  # fmt: skip


def test_cooldown_s_is_the_wait_before_the_arms_first_launch():
    """A-B-A-B: b's first launch came after 183.4 s of cooldown; a's first launch had none
    (the first arm); the later rounds' cooldowns do not change either."""
    events: list[Event] = [
        StartEvent(t=0, wall=0, arm="a"), TrialEvent(t=5, wall=5, arm="a", decode_tps=9.0),
        PhaseEvent(t=10, wall=10, arm="b", phase="cooling"),
        cooldown(10, "b", 0.0), cooldown(15, "b", 5.0), cooldown(193.4, "b", 183.4, done=True),
        PhaseEvent(t=194, wall=194, arm="b", phase="launching"),
        StartEvent(t=196, wall=196, arm="b"), TrialEvent(t=200, wall=200, arm="b"),
        cooldown(400, "a", 200.0, done=True), StartEvent(t=401, wall=401, arm="a"),
        cooldown(700, "b", 250.0, done=True), StartEvent(t=701, wall=701, arm="b"),
    ]  # fmt: skip
    a, b = summarize(Session.from_events(events))
    assert (a.cooldown_s, b.cooldown_s) == (None, 183.4)
    assert (len(a.rounds), len(b.rounds)) == (2, 2)


def test_cooldown_s_of_a_recorded_run_and_null_for_a_raw_log(tmp_path):
    """The sample recording of protocol v2: the GPU arm launched after its cooldown ended;
    the same trials as a raw log (no controller) give no cooldown_s."""
    sample = Path(__file__).parents[2] / "recordings" / "sim-sustain-1b-v2.jsonl"
    done = [
        json.loads(line)
        for line in sample.read_text().splitlines()[1:]
        if '"kind":"cooldown"' in line and '"done":true' in line
    ]
    (last,) = done
    ane, gpu = summarize(Session.from_events(open_source(sample)))
    assert ane.cooldown_s is None
    assert gpu.arm == last["arm"] and gpu.cooldown_s == round(last["elapsed_s"], 1)
    raw = [json.loads(line)["line"] for line in sample.read_text().splitlines()[1:]
           if '"line":' in line]  # fmt: skip
    log = tmp_path / "raw.log"
    log.write_text("\n".join(raw) + "\n")
    assert [s.cooldown_s for s in summarize(Session.from_events(open_source(log)))] == [None, None]


def test_json_has_the_version_2_keys(tmp_path):
    trials = sustained_run(4, burst=40.0, plateau=30.0)
    data = one_arm(trials, tmp_path).to_json()
    for key in (*FIGURES, "cooldown_s"):
        assert key in data
    assert json.loads(json.dumps(data))["burst_tps"] == pytest.approx(expect(trials)["burst_tps"])
    assert not any(isinstance(v, float) and math.isnan(v) for v in data.values())
