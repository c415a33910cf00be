"""`compare` (cli.md "v2: compare"): arms side by side across sessions, the change against the
first, and for three or more sessions the median with a seeded bootstrap interval.
Expectations are computed here from the generated logs' own numbers."""

from __future__ import annotations

import csv
import io
import json
import re
import statistics
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from anemon.analysis import compare as cmp
from anemon.analysis.render import LinesTable
from anemon.analysis.summary import summarize
from anemon.events import StartEvent, TrialEvent
from anemon.recording.reader import open_source
from anemon.store import Session

# decode tok/s of each arm's five trials, per session (means 50 / 55 / 45 and 20 / 18 / 30)
SESSIONS = [
    {"ane_a": [48, 49, 50, 51, 52], "gpu_b": [22, 21, 20, 19, 18]},
    {"ane_a": [53, 54, 55, 56, 57], "gpu_b": [20, 19, 18, 17, 16]},
    {"ane_a": [43, 44, 45, 46, 47], "gpu_b": [32, 31, 30, 29, 28], "cpu_c": [5, 5, 5, 5, 5]},
]
COMPUTE = {"ane_a": "ane", "gpu_b": "gpu", "cpu_c": "cpu"}


def log_text(
    arms: dict[str, list[float]], *, compute: dict[str, str] = COMPUTE, step: float = 10
) -> str:
    lines = []
    for arm, decodes in arms.items():
        lines.append(f"START arm={arm} compute={compute[arm]} mode=sustain")
        lines += [
            f"TRIAL arm={arm} trial={i} warmup=0 t={1 + step * i} decode_tps={d} gen=100 "
            f"prompt_tps=900 thermal={'fair' if i < 3 else 'serious'}"
            for i, d in enumerate(decodes)
        ]
        lines.append(f"END arm={arm} reason=done trials={len(decodes)}")
    return "\n".join(lines) + "\n"


def source_arms(tmp_path: Path, sessions=SESSIONS, **kw) -> list[cmp.SourceArms]:
    out = []
    for n, arms in enumerate(sessions, 1):
        path = tmp_path / f"s{n}.log"
        path.write_text(log_text(arms, **kw))
        session = Session.from_events(open_source(path))
        out.append(cmp.SourceArms.of(path.name, session, summarize(session)))
    return out


def by_name(comparison: cmp.Comparison) -> dict[str, cmp.ArmComparison]:
    return {arm.arm: arm for arm in comparison.arms}


def percent(first: float, value: float) -> float:
    return 100 * (value - first) / first


def test_three_sessions_give_deltas_median_and_interval(tmp_path):
    comparison = cmp.compare(source_arms(tmp_path))
    assert comparison.sources == ("s1.log", "s2.log", "s3.log")
    ane = by_name(comparison)["ane_a"]
    means = [statistics.mean(s["ane_a"]) for s in SESSIONS]  # 50, 55, 45
    assert [s.decode_mean for s in ane.sessions] == means
    d = ane.delta_pct["decode_mean"]
    assert d[0] is None
    assert d[1] == pytest.approx(percent(means[0], means[1])) == pytest.approx(10.0)
    assert d[2] == pytest.approx(-10.0)
    assert ane.median is not None and ane.ci95 is not None
    assert ane.median["decode_mean"] == statistics.median(means) == 50.0
    lo, hi = ane.ci95["decode_mean"]
    assert min(means) <= lo <= 50.0 <= hi <= max(means)
    assert ane.median["trials"] == 5.0 and ane.ci95["trials"] == (5.0, 5.0)
    burst = [statistics.median(s["ane_a"][:6]) for s in SESSIONS]  # el 0..40: every trial
    assert ane.median["burst_tps"] == statistics.median(burst)


def test_the_interval_is_the_documented_seeded_bootstrap(tmp_path):
    """Recomputed here from the README's recipe: default_rng(seed), 10,000 resamples of the
    median, the 2.5th and 97.5th percentiles."""
    comparison = cmp.compare(source_arms(tmp_path))
    gpu = by_name(comparison)["gpu_b"]
    means = np.array([statistics.mean(s["gpu_b"]) for s in SESSIONS])  # 20, 18, 30
    rng = np.random.default_rng(20_261_111)
    picks = rng.integers(0, 3, size=(10_000, 3))
    medians = np.median(means[picks], axis=1)
    want = tuple(np.percentile(medians, [2.5, 97.5]))
    assert gpu.ci95 is not None
    assert gpu.ci95["decode_mean"] == pytest.approx(want)
    again = cmp.compare(source_arms(tmp_path))
    assert again.to_json() == comparison.to_json()  # seeded: the same every time


def test_an_arm_in_fewer_than_three_sessions_has_no_median(tmp_path):
    comparison = cmp.compare(source_arms(tmp_path))
    cpu = by_name(comparison)["cpu_c"]
    assert cpu.sessions[:2] == (None, None) and cpu.sessions[2] is not None
    assert cpu.median is None and cpu.ci95 is None
    assert set(cpu.delta_pct["decode_mean"]) == {None}  # no first value to compare with
    assert "median" not in cpu.to_json() and "ci95" not in cpu.to_json()
    two = cmp.compare(source_arms(tmp_path, SESSIONS[:2]))
    assert all(arm.median is None for arm in two.arms)


def test_delta_is_null_where_either_value_is_null_or_the_first_is_zero():
    assert cmp.delta_list([None, 3.0]) == (None, None)
    assert cmp.delta_list([2.0, None, 3.0]) == (None, None, 50.0)
    assert cmp.delta_list([0.0, 1.0]) == (None, None)


def test_by_compute_matches_arms_of_the_same_compute(tmp_path):
    renamed = [{f"{arm}_{n}": d for arm, d in s.items()} for n, s in enumerate(SESSIONS)]
    compute = {f"{arm}_{n}": COMPUTE[arm] for arm in COMPUTE for n in range(3)}
    sources = source_arms(tmp_path, renamed, compute=compute)
    assert [a.arm for a in cmp.compare(sources).arms][:2] == ["ane_a_0", "gpu_b_0"]
    comparison = cmp.compare(sources, by="compute")
    assert [a.arm for a in comparison.arms] == ["ane", "gpu", "cpu"]
    ane = by_name(comparison)["ane"]
    assert [s.arm for s in ane.sessions if s] == ["ane_a_0", "ane_a_1", "ane_a_2"]
    assert ane.delta_pct["decode_mean"][1] == pytest.approx(10.0)
    assert ane.median is not None and ane.median["decode_mean"] == 50.0


def test_by_compute_a_second_arm_of_one_compute_is_its_own_group(tmp_path):
    sessions = [{"ane_a": [50] * 5, "gpu_b": [20] * 5}, {"ane_a": [40] * 5, "gpu_b": [10] * 5}]
    both_ane = {"ane_a": "ane", "gpu_b": "ane"}
    comparison = cmp.compare(source_arms(tmp_path, sessions, compute=both_ane), by="compute")
    assert [a.arm for a in comparison.arms] == ["ane", "ane 2"]
    assert by_name(comparison)["ane 2"].delta_pct["decode_mean"] == (None, -50.0)


def test_json_has_the_spec_shape(tmp_path):
    data = json.loads(cmp.to_json(cmp.compare(source_arms(tmp_path))))
    assert set(data) == {"sources", "by", "arms"} and data["by"] == "arm"
    for arm in data["arms"]:
        three = sum(s is not None for s in arm["sessions"]) >= 3
        extra = {"median", "ci95"} if three else set()
        assert set(arm) == {"arm", "sessions", "delta_pct"} | extra
        assert len(arm["sessions"]) == len(data["sources"])
        assert set(arm["delta_pct"]) == set(cmp.NUMERIC_KEYS)
        for values in arm["delta_pct"].values():
            assert len(values) == 3 and values[0] is None
        for s in arm["sessions"]:
            assert s is None or s["arm"] == arm["arm"]
        if three:
            assert set(arm["median"]) == set(arm["ci95"]) == set(cmp.NUMERIC_KEYS)
            for key, ci in arm["ci95"].items():
                assert ci is None or (len(ci) == 2 and ci[0] <= arm["median"][key] <= ci[1])


def test_numeric_keys_are_the_summarys_figures():
    assert {"trials", "decode_mean", "burst_tps", "retained_pct", "j_per_token",
            "cooldown_s", "errors"} <= set(cmp.NUMERIC_KEYS)  # fmt: skip
    assert not {"arm", "thermal_start", "thermal_end", "rounds", "status", "energy_note"} & set(
        cmp.NUMERIC_KEYS
    )


def test_markdown_has_the_key_figures_with_deltas_and_rounds(tmp_path):
    sources = source_arms(tmp_path)
    path = tmp_path / "ab.log"
    path.write_text(log_text({"ane_a": [60] * 5}) + log_text({"ane_a": [70] * 5}))
    session = Session.from_events(open_source(path))
    sources.insert(1, cmp.SourceArms.of("ab.log", session, summarize(session)))
    text = cmp.markdown(cmp.compare(sources))
    lines = text.splitlines()
    assert lines[0].startswith("### s1.log vs ab.log vs s2.log") and lines[1] == ""
    assert lines[2] == ("| arm | source | decode tok/s | Δ decode | burst → sust | Δ sust | "
                        "retained | thermal | serious share | J/token | Δ J/token |")  # fmt: skip
    assert "| ane_a | s1.log | 50.0 | — |" in text
    assert "| ane_a | ab.log | 60.0 / 70.0 | +30.0 % |" in text  # mean 65 against 50
    # every figure of a round's course per round, each from its own trials
    assert (
        "| 60.0 → — / 70.0 → — | — | — / — | fair → serious / fair → serious | 40 % / 40 % |"
        in text
    )
    assert "| ane_a | s3.log | 45.0 | −10.0 % |" in text
    assert "| ane_a | median [95 % CI] | 52.5 [" in text  # four sessions: 50, 65, 55, 45
    assert "Δ: change against s1.log." in lines


def test_csv_has_one_row_per_arm_and_source(tmp_path):
    text = cmp.to_csv(cmp.compare(source_arms(tmp_path)))
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [(r["arm"], r["source"]) for r in rows] == [
        ("ane_a", "s1.log"), ("ane_a", "s2.log"), ("ane_a", "s3.log"),
        ("gpu_b", "s1.log"), ("gpu_b", "s2.log"), ("gpu_b", "s3.log"), ("cpu_c", "s3.log"),
    ]  # fmt: skip
    assert float(rows[1]["delta_pct_decode_mean"]) == pytest.approx(10.0)
    assert rows[0]["delta_pct_decode_mean"] == ""
    by_compute = cmp.to_csv(cmp.compare(source_arms(tmp_path), by="compute"))
    assert by_compute.startswith("compute,source,arm,")


def test_the_table_fits_and_keeps_names_whole(tmp_path):
    comparison = cmp.compare(source_arms(tmp_path))
    for width in (60, 100, 200):
        console = Console(width=width, record=True, color_system=None)
        console.print(cmp.rich_table(comparison, width))
        text = console.export_text()
        assert max(len(line) for line in text.splitlines()) <= width
        assert "ane_a" in text and "…" not in text


def test_names_are_data_escaped_in_the_table_and_markdown():
    name = "x\x1b[2Jy"
    session = Session.from_events([
        StartEvent(t=0, wall=0, arm=name, compute="ane"),
        TrialEvent(t=1, wall=1, arm=name, trial=1, decode_tps=50.0),
    ])  # fmt: skip
    source = cmp.SourceArms.of("s\x07.log", session, summarize(session))
    comparison = cmp.compare([source, source])
    md = cmp.markdown(comparison)
    assert "\x1b" not in md and "\x07" not in md
    assert "x\\x1b[2Jy" in md and "s\\x07.log" in md
    console = Console(width=200, record=True, color_system=None)
    console.print(cmp.rich_table(comparison, 200))
    assert "x\\x1b[2Jy" in console.export_text()
    assert json.loads(cmp.to_json(comparison))["arms"][0]["arm"] == name  # JSON: as it is


def test_the_thermal_state_stands_beside_every_figure(tmp_path):
    """Each session's thermal start → end and serious share (fair for trials 0-2, then
    serious: 40 %), and the median's share with its interval."""
    rows = cmp.table_rows(cmp.compare(source_arms(tmp_path)))
    names = cmp.table_columns(cmp.compare(source_arms(tmp_path)))
    cells = [dict(zip(names, row, strict=True)) for row in rows]
    session = next(c for c in cells if c["source"] == "s2.log")
    assert (session["thermal"], session["serious share"]) == ("fair → serious", "40 %")
    median = next(c for c in cells if c["source"] == "median [95 % CI]")
    assert median["thermal"] == "" and median["serious share"] == "40 [40, 40] %"


def test_intervals_carry_their_units(tmp_path):
    """A trial a minute: four minutes, long enough for a sustained figure and retained %."""
    comparison = cmp.compare(source_arms(tmp_path, step=60))
    rows, names = cmp.table_rows(comparison), cmp.table_columns(comparison)
    median = dict(zip(names, next(r for r in rows if r[1] == "median [95 % CI]"), strict=True))
    decode = median["decode tok/s"]
    assert decode.startswith("50.0 [") and decode.endswith("] tok/s")
    assert median["retained"].endswith("] %") and median["serious share"].endswith("] %")


def test_csv_and_json_carry_the_thermal_state(tmp_path):
    comparison = cmp.compare(source_arms(tmp_path))
    (row, *_) = csv.DictReader(io.StringIO(cmp.to_csv(comparison)))
    assert (row["thermal_start"], row["thermal_end"], row["serious_frac"]) == (
        "fair",
        "serious",
        "0.4",
    )
    session = json.loads(cmp.to_json(comparison))["arms"][0]["sessions"][0]
    assert (session["thermal_start"], session["serious_frac"]) == ("fair", 0.4)


def test_at_200_columns_long_sources_are_elided_not_a_figure_column(tmp_path):
    """Issue 24: at 200 columns the table left out "retained" for a wide source column.
    Each source's label is elided in the middle (its head and tail tell them apart) before
    any column goes; the note says so, and the first source is named whole."""
    names = [f"2026-12-0{n}-iphone16pro-lab-bench-morning-sustained-session/minicpm5-1b"
             "-ane-pal8-and-gpu-int8-run-with-the-cooldown-protocol-version-2.log"
             for n in (1, 2)]  # fmt: skip
    sources = []
    for name, arms in zip(names, SESSIONS, strict=False):
        path = tmp_path / name
        path.parent.mkdir()
        path.write_text(log_text(arms))
        session = Session.from_events(open_source(path))
        sources.append(cmp.SourceArms.of(str(path), session, summarize(session)))
    comparison = cmp.compare(sources)
    table = cmp.rich_table(comparison, 200)
    assert isinstance(table, LinesTable) and table.headers == cmp.table_columns(comparison)
    out = io.StringIO()
    Console(file=out, width=200).print(table)
    text = out.getvalue()
    assert "not shown" not in text
    for day in ("01", "02"):  # each label with its head and its tail
        assert re.search(rf"│ 2026-12-{day}-iphone16pro\S*…\S*version-2\.log │", text)
    note = "".join(text.split())  # the caption wraps the long path
    assert "elidedinthemiddle" in note and f"changeagainst{sources[0].source}" in note
    assert all(len(line) <= 200 for line in text.splitlines())
    # narrower, columns go in DROP_ORDER after the labels are as short as they can be
    out = io.StringIO()
    Console(file=out, width=100).print(cmp.rich_table(comparison, 100))
    assert "not shown (too narrow): Δ sust, serious share, Δ J/token" in out.getvalue()
