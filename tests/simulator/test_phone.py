"""The facade: the lines the app writes, launches, the container, virtual time."""

from __future__ import annotations

import itertools

import pytest

from anemon.simulator import PROFILES, SimArmConfig, SimConfig, SimulatedIPhone

from .logparse import BUNDLE, env, kinds, log, parse, run

ANE = "minicpm5_1b_ane_pal8"
GPU = "minicpm5_1b_gpu_int8"
TRIAL_KEYS = {"arm", "trial", "warmup", "t", "prompt_tokens", "prompt_tps", "decode_tps",
              "gen", "battery", "battery_state", "thermal", "free_gb"}  # fmt: skip


def test_a_sustain_arm_writes_start_load_warmup_trials_end():
    sim = SimulatedIPhone(SimConfig())
    run(sim, env(ANE, AB_SECONDS="60"))
    records = log(sim)
    assert kinds(records)[:3] == ["START", "LOAD", "TRIAL"] and kinds(records)[-1] == "END"
    start, load, *trials, end = records
    assert start.fields == {"arm": ANE, "model": "MiniCPM5-1B", "compute": "ane", "bits": "8",
                            "os": "24A437", "free_gb": "38.0", "mode": "sustain", "p": "128",
                            "g": "256"}  # fmt: skip
    assert set(load.fields) == {"arm", "load_s", "cold", "footprint_gb"}
    assert all(set(r.fields) == TRIAL_KEYS for r in trials)
    assert [(r["trial"], r["warmup"]) for r in trials[:2]] == [("0", "1"), ("1", "0")]
    assert [int(r["trial"]) for r in trials] == list(range(len(trials)))
    assert end.fields == {"arm": ANE, "reason": "done", "trials": str(len(trials) - 1)}


def test_trials_last_as_long_as_their_speeds_imply():
    sim = SimulatedIPhone(SimConfig())
    run(sim, env(GPU, AB_SECONDS="120"))
    trials = [r for r in log(sim) if r.kind == "TRIAL"]
    for before, after in itertools.pairwise(trials):
        implied = 128 / float(after["prompt_tps"]) + 256 / float(after["decode_tps"])
        took = float(after["t"]) - float(before["t"])
        assert implied < took < implied + 0.2


def test_sustain_runs_trials_until_its_seconds_have_elapsed():
    sim = SimulatedIPhone(SimConfig())
    run(sim, env(ANE, AB_SECONDS="100"))
    trials = [float(r["t"]) for r in log(sim) if r.kind == "TRIAL"]
    first_began = trials[0]  # the warm-up's end
    assert trials[-2] - first_began < 100 <= trials[-1] - first_began


def test_ab_mode_runs_its_trials_and_says_n():
    sim = SimulatedIPhone(SimConfig())
    run(sim, env(GPU, "ab", AB_TRIALS="5", AB_PROMPT="64", AB_GEN="128"))
    start, _, *trials, end = log(sim)
    assert (start["mode"], start["n"], start["p"], start["g"]) == ("ab", "5", "64", "128")
    assert len(trials) == 6 and {r["gen"] for r in trials} == {"128"}
    assert {r["prompt_tokens"] for r in trials} == {"64"}
    assert end["trials"] == "5"


def test_idle_mode_writes_an_idle_line_every_interval_until_killed():
    sim = SimulatedIPhone(SimConfig(start_thermal="serious"))
    pid = sim.launch(BUNDLE, {"AB_MODE": "idle", "AB_TAG": "t", "AB_INTERVAL": "5"})
    sim.advance(21)
    sim.terminate(pid)
    sim.advance(30)
    records = log(sim)
    assert kinds(records) == ["IDLE"] * 5
    assert set(records[0].fields) == {"thermal", "battery", "battery_state", "free_gb"}
    assert records[0]["thermal"] == "serious"


def test_several_launches_append_to_one_log_and_ab_log_moves_it():
    sim = SimulatedIPhone(SimConfig())
    for model in (ANE, GPU, ANE, GPU):
        run(sim, env(model, "ab", AB_TRIALS="2"))
    run(sim, env(ANE, "ab", AB_TRIALS="1", AB_LOG="Documents/other.log"))
    starts = [r["arm"] for r in log(sim) if r.kind == "START"]
    assert starts == [ANE, GPU, ANE, GPU]
    files = sim.container_files(BUNDLE)
    assert set(files) == {"Documents/sustain/t.log", "Documents/other.log"}
    assert kinds(parse(files["Documents/other.log"]))[0] == "START"


def test_a_killed_app_writes_nothing_more():
    sim = SimulatedIPhone(SimConfig())
    pid = sim.launch(BUNDLE, env(ANE))
    sim.advance(30)
    assert sim.running() == {pid}
    sim.terminate(pid)
    before = sim.container_files(BUNDLE)
    sim.advance(600)
    assert sim.running() == set() and sim.next_change_in() is None
    assert sim.container_files(BUNDLE) == before
    assert "END" not in kinds(log(sim))
    sim.terminate(pid)  # already gone: ignored


def test_a_second_launch_replaces_the_running_app():
    sim = SimulatedIPhone(SimConfig())
    first = sim.launch(BUNDLE, env(ANE))
    sim.advance(10)
    second = sim.launch(BUNDLE, env(GPU))
    assert second != first and sim.running() == {second}


def test_an_app_told_its_arm_writes_it_and_runs_that_arms_settings():
    """AB_ARM names the arm (its `arm=` and its [sim.arms] settings); AB_MODEL the model."""
    sim = SimulatedIPhone(SimConfig(arms={"slow": SimArmConfig(profile=ANE, fault="load_error")}))
    run(sim, env(ANE, AB_ARM="fast", AB_SECONDS="10"))
    run(sim, env(ANE, AB_ARM="slow"))
    records = log(sim)
    assert {r["arm"] for r in records} == {"fast", "slow"}
    assert [(r["arm"], r["reason"]) for r in records if r.kind == "END"] == [
        ("fast", "done"), ("slow", "error")
    ]  # fmt: skip


def test_the_app_complains_about_a_missing_or_unknown_model():
    sim = SimulatedIPhone(SimConfig())
    run(sim, {"AB_TAG": "t"})
    run(sim, env("llama_9b_npu"))
    records = log(sim)
    assert kinds(records) == ["ERROR", "END", "ERROR", "END"]
    assert records[0].message == "AB_MODEL is not set" and records[1]["reason"] == "error"
    assert records[2]["arm"] == "llama_9b_npu" and "unknown model" in records[2].message
    assert sim.running() == set()


def test_read_container_file_reads_ranges_and_knows_missing_files():
    sim = SimulatedIPhone(SimConfig())
    run(sim, env(ANE, "ab", AB_TRIALS="1"))
    whole = sim.container_files(BUNDLE)["Documents/sustain/t.log"]
    path = "Documents/sustain/t.log"
    assert sim.read_container_file(BUNDLE, path) == whole
    assert sim.read_container_file(BUNDLE, path, 10, 20) == whole[10:30]
    assert sim.read_container_file(BUNDLE, path, len(whole)) == b""
    with pytest.raises(FileNotFoundError):
        sim.read_container_file(BUNDLE, "Documents/nope.log")
    with pytest.raises(FileNotFoundError):
        sim.read_container_file("com.other", path)
    assert sim.container_files("com.other") == {}


def test_next_change_in_lets_a_driver_jump_from_line_to_line():
    sim = SimulatedIPhone(SimConfig())
    assert sim.next_change_in() is None
    sim.launch(BUNDLE, env(ANE, AB_SECONDS="600"))
    jumps = 0
    while (d := sim.next_change_in()) is not None:
        assert d > 0
        sim.advance(d)
        jumps += 1
    # START, LOAD, the warm-up and 133 trials, then END at the instant of the last trial
    assert len(log(sim)) == 137 and jumps == 136
    assert sim.running() == set() and sim.now > 600


def drive(seed: int, step: float | None) -> bytes:
    sim = SimulatedIPhone(SimConfig(seed=seed))
    sim.launch(BUNDLE, env(ANE, AB_SECONDS="120"))
    while sim.running():
        sim.advance(step if step is not None else sim.next_change_in() or 0.0)
    return sim.container_files(BUNDLE)["Documents/sustain/t.log"]


def test_the_same_seed_gives_the_same_bytes():
    assert drive(7, None) == drive(7, None)
    assert drive(7, None) != drive(8, None)


def test_the_bytes_do_not_depend_on_how_the_driver_slices_time():
    assert drive(3, None) == drive(3, 0.25) == drive(3, 1.7)


def test_every_arm_of_the_notebook_has_a_profile():
    expected = {
        "minicpm5_1b_ane_pal8": ("ane", 8), "minicpm5_1b_gpu_int8": ("gpu", 8),
        "minicpm5_2b_ane": ("ane", 4), "minicpm5_2b_ane_6bit": ("ane", 6),
        "minicpm5_2b_ane_pal8": ("ane", 8), "minicpm5_2b_gpu_int8": ("gpu", 8),
        "minicpm5_2b_gpu_int4lin": ("gpu", 4), "qwen3_1_7b_ane": ("ane", 4),
        "qwen3_1_7b_ane_6bit": ("ane", 6), "qwen3_1_7b_gpu_int4lin": ("gpu", 4),
        "qwen3_1_7b_zoo_iosgpu": ("gpu", 4),
    }  # fmt: skip
    assert {name: (p.compute, p.bits) for name, p in PROFILES.items()} == expected


@pytest.mark.parametrize(
    ("model", "decode"),
    [("minicpm5_2b_ane", 55.0), ("minicpm5_2b_ane_6bit", 38.5), ("minicpm5_2b_gpu_int8", 26.0),
     ("minicpm5_2b_gpu_int4lin", 17.0), ("qwen3_1_7b_gpu_int4lin", 62.0)],
)  # fmt: skip
def test_short_ab_runs_from_cool_give_the_notebook_speeds(model: str, decode: float):
    sim = SimulatedIPhone(SimConfig())
    run(sim, env(model, "ab", AB_TRIALS="3"))
    speeds = [float(r["decode_tps"]) for r in log(sim) if r.kind == "TRIAL"]
    assert sum(speeds) / len(speeds) == pytest.approx(decode, rel=0.1)


def test_a_2b_6bit_ane_arm_is_flat_over_a_minute_at_fair():
    sim = SimulatedIPhone(SimConfig())
    run(sim, env("minicpm5_2b_ane_6bit", AB_SECONDS="60"))
    trials = [r for r in log(sim) if r.kind == "TRIAL" and r["warmup"] == "0"]
    speeds = [float(r["decode_tps"]) for r in trials]
    assert max(speeds) / min(speeds) < 1.12
    assert {r["thermal"] for r in trials} == {"fair"}
