"""The per-arm summary of docs/spec/line-protocol.md and its renderings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from anemon.analysis import render
from anemon.analysis.summary import summarize
from anemon.recording.reader import open_source
from anemon.store import Session

SPEC = Path(__file__).parents[2] / "tests" / "data" / "spec_example.log"
KEYS = {
    "arm", "trials", "tokens", "decode_mean", "decode_first3", "decode_last3", "decode_min",
    "decode_max", "prefill_mean", "thermal_start", "thermal_end", "thermal_peak", "serious_at_s",
    "battery_start", "battery_end", "errors", "rounds",
    "power_w_mean", "energy_j", "j_per_token", "tokens_per_battery_pct", "energy_note",
    "status", "status_reason", "burst_tps", "sustained_tps", "retained_pct", "fade_10_s",
    "fade_25_s", "fade_50_s", "serious_frac", "cooldown_s", "energy_source", "summary_version",
    "mem_peak_gb", "cpu_mean_pct", "gpu_mean_pct",
}  # fmt: skip
ROUND_KEYS = {
    "trials", "decode_mean", "prefill_mean", "thermal_start", "thermal_end", "serious_at_s",
    "burst_tps", "sustained_tps", "retained_pct", "fade_10_s", "fade_25_s", "fade_50_s",
    "serious_frac",
}  # fmt: skip


def summaries_of(text: str, tmp_path):
    path = tmp_path / "bench.log"
    path.write_text(text)
    return summarize(Session.from_events(open_source(path)))


def trial(arm, i, decode, prefill=1000.0, thermal="fair", t=None, gen=256, warmup=0, battery=95):
    t = float(i) * 4.5 if t is None else t
    return (
        f"TRIAL arm={arm} trial={i} warmup={warmup} t={t} prompt_tps={prefill} "
        f"decode_tps={decode} gen={gen} battery={battery} thermal={thermal}\n"
    )


def test_spec_example():
    (first, second) = summarize(Session.from_events(open_source(SPEC)))
    assert first.arm == "minicpm5_1b_ane_pal8"
    assert (first.trials, first.tokens, first.decode_mean, first.prefill_mean) == (
        1, 256, 75.8, 3902.4,
    )  # fmt: skip
    assert (first.thermal_start, first.thermal_end, first.serious_at_s) == (1, 1, None)
    assert (second.arm, second.errors, second.trials) == ("minicpm5_2b_ane_pal8", 1, 0)


def test_warmups_excluded_first3_last3_min_max(tmp_path):
    text = "START arm=a\n" + trial("a", 0, 10.0, warmup=1)
    text += "".join(trial("a", i, d) for i, d in enumerate([70, 80, 90, 60, 50, 40, 30], 1))
    (s,) = summaries_of(text, tmp_path)
    assert s.trials == 7 and s.tokens == 7 * 256
    assert s.decode_mean == pytest.approx(60.0)
    assert s.decode_first3 == pytest.approx(80.0)
    assert s.decode_last3 == pytest.approx(40.0)
    assert (s.decode_min, s.decode_max) == (30.0, 90.0)


def test_serious_at_and_thermal_and_battery(tmp_path):
    text = trial("a", 1, 70, thermal="fair", t=5.0, battery=95)
    text += trial("a", 2, 60, thermal="serious", t=72.5, battery=94)
    text += trial("a", 3, 50, thermal="critical", t=80.0, battery=0.9)
    (s,) = summaries_of(text, tmp_path)
    assert (s.thermal_start, s.thermal_end, s.serious_at_s) == (1, 3, 72.5)
    assert (s.battery_start, s.battery_end) == (95.0, 90.0)


def test_missing_values_count_in_trials_and_tokens_not_in_means(tmp_path):
    text = trial("a", 1, "oops", prefill="n/a") + trial("a", 2, 50, prefill=900)
    (s,) = summaries_of(text, tmp_path)
    assert (s.trials, s.tokens, s.decode_mean, s.prefill_mean) == (2, 512, 50.0, 900.0)


def test_rounds_per_launch_and_lab_note_a_slash_b(tmp_path):
    text = ""
    for rnd, (a, b) in enumerate([(19.0, 30.0), (24.0, 32.0)]):
        text += "START arm=A\n" + trial("A", 0, 1, warmup=1)
        text += "".join(trial("A", i, a + i - 1) for i in range(1, 4))  # mean a+1
        text += f"ERROR: round {rnd} hiccup\n"
        text += "START arm=B\n" + "".join(trial("B", i, b) for i in range(1, 3))
    arm_a, arm_b = summaries_of(text, tmp_path)
    assert [r.trials for r in arm_a.rounds] == [3, 3]
    assert [r.decode_mean for r in arm_a.rounds] == [20.0, 25.0]
    assert (arm_a.errors, arm_b.errors) == (2, 0)
    md = render.markdown([arm_a, arm_b])
    assert "| A | incomplete after 3 trials | 6 |" in md  # no END: the log stops
    assert "20.0 / 25.0" in md and "30.0 / 32.0" in md


def test_a_row_of_several_rounds_shows_each_rounds_course(tmp_path):
    """Round 1 cool and steady, round 2 hot and fading: each cell of a round's course is per
    round, from that round's trials; the arm's keys keep their meaning (thermal over every
    trial, the sustained figures over the first round)."""
    cool = "".join(trial("A", i, 50.0, t=1 + 10 * i) for i in range(6))
    hot = "".join(trial("A", i, 60.0 - 10 * i, thermal="serious", t=1 + 10 * i) for i in range(6))
    (s,) = summaries_of("START arm=A\n" + cool + "START arm=A\n" + hot, tmp_path)
    cell = dict(zip(render.table_columns([s]), render.table_rows([s])[0], strict=True))
    assert cell["thermal"] == "fair → fair / serious → serious"
    assert (cell["serious at"], cell["serious share"]) == ("— / 1 s", "0 % / 100 %")
    assert cell["burst → sust"] == "50.0 → — / 35.0 → —"
    assert cell["fade −10/25/50 %"] == "—; 10 / 20 / 40 s"
    assert (s.thermal_start, s.thermal_end, s.serious_at_s) == (1, 2, 1.0)
    assert (s.serious_frac, s.burst_tps) == (0.0, 50.0)
    assert [r.serious_frac for r in s.rounds] == [0.0, 1.0]


def test_json_has_exactly_the_spec_keys(tmp_path):
    (s,) = summaries_of(trial("a", 1, 70, thermal="serious"), tmp_path)
    (obj,) = json.loads(render.to_json([s]))
    assert set(obj) == KEYS
    assert obj["thermal_start"] == "serious" and obj["serious_at_s"] == 4.0  # as "4 s"
    assert set(obj["rounds"][0]) == ROUND_KEYS
    assert obj["rounds"][0]["thermal_start"] == "serious"  # names, as the arm's


def test_csv_has_one_row_per_arm(tmp_path):
    text = trial("a", 1, 70) + trial("b", 1, 30)
    csv = render.to_csv(summaries_of(text, tmp_path)).splitlines()
    assert len(csv) == 3 and csv[0].startswith("arm,trials,tokens,decode_mean")
    assert [row.split(",")[0] for row in csv[1:]] == ["a", "b"]


def test_csv_flattens_the_rounds_into_a_count_and_their_means(tmp_path):
    text = "START arm=A\n" + trial("A", 1, 19.0) + "START arm=A\n" + trial("A", 1, 24.0)
    header, row = render.to_csv(summaries_of(text, tmp_path)).splitlines()
    assert header.endswith(
        ",energy_note,status,status_reason,energy_source,mem_peak_gb,cpu_mean_pct,gpu_mean_pct,"
        "rounds,round_decode_means,round_prefill_means,summary_version"
    )
    assert row.endswith(  # no process readings: empty, never 0
        ",no power samples,incomplete,the log stops with no END,,,,,2,19.0 / 24.0,1000 / 1000,3"
    )


def test_rich_table_shows_arm_names_and_titles_literally(tmp_path):
    from rich.console import Console

    (s,) = summaries_of(trial("[bold]x[/bold]", 1, 70), tmp_path)
    console = Console(width=200, record=True, color_system=None)
    console.print(render.rich_table([s], title="[red]runs/a.log"))
    text = console.export_text()
    assert "[bold]x[/bold]" in text and "[red]runs/a.log" in text


def two_sources(tmp_path):
    a = summaries_of(trial("a", 1, 70) + trial("b", 1, 30), tmp_path)
    b = summaries_of(trial("a", 1, 60), tmp_path)
    return [render.SourceSummaries("runs/one.log", a), render.SourceSummaries("two.jsonl", b)]


def test_json_of_sources_is_one_list_with_the_source_on_every_arm(tmp_path):
    objects = json.loads(render.to_json_of_sources(two_sources(tmp_path)))
    assert [(o["source"], o["arm"]) for o in objects] == [
        ("runs/one.log", "a"), ("runs/one.log", "b"), ("two.jsonl", "a"),
    ]  # fmt: skip
    assert all(set(o) == KEYS | {"source"} for o in objects)
    assert next(iter(objects[0])) == "source"


def test_json_of_no_arms_is_still_a_list():
    assert json.loads(render.to_json_of_sources([render.SourceSummaries("x.log", [])])) == []


def test_csv_of_sources_has_one_header_and_source_first(tmp_path):
    header, *rows = render.to_csv_of_sources(two_sources(tmp_path)).splitlines()
    assert header.startswith("source,arm,trials,tokens,decode_mean")
    assert header.endswith(",rounds,round_decode_means,round_prefill_means,summary_version")
    assert [row.split(",")[:2] for row in rows] == [
        ["runs/one.log", "a"], ["runs/one.log", "b"], ["two.jsonl", "a"],
    ]  # fmt: skip


def test_markdown_of_sources_titles_each_table_and_separates_them(tmp_path):
    text = render.markdown_of_sources(two_sources(tmp_path))
    first, second = text.split("\n\n### ")
    assert first.startswith("### runs/one.log\n\n| arm | status | trials |")
    assert second.startswith("two.jsonl\n\n| arm | status | trials |")
    assert first.count("| a |") == 1 and "| b |" in first and "| b |" not in second
    assert render.markdown_of_sources(two_sources(tmp_path)[:1]) == (
        "### runs/one.log\n\n" + render.markdown(two_sources(tmp_path)[0].summaries)
    )
