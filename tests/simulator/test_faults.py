"""Every failure shape of docs/domain.md, injectable per arm (docs/spec/plan.md `fault`)."""

from __future__ import annotations

import pytest

from anemon.simulator import SimArmConfig, SimConfig, SimLaunchRefused, SimulatedIPhone

from .logparse import BUNDLE, env, kinds, log, parse, run

ANE = "minicpm5_1b_ane_pal8"
GPU = "minicpm5_1b_gpu_int8"


def faulty(arm: str, fault: str, **settings: float) -> SimulatedIPhone:
    config = SimArmConfig(profile=arm, fault=fault, **settings)  # type: ignore[arg-type]
    return SimulatedIPhone(SimConfig(arms={arm: config}))


def refusal(sim: SimulatedIPhone, model: str = ANE) -> SimLaunchRefused | None:
    try:
        sim.launch(BUNDLE, env(model))
    except SimLaunchRefused as refused:
        return refused
    return None


@pytest.mark.parametrize(
    ("model", "config"),
    [(ANE, SimArmConfig(profile=ANE, fault="hang")), ("minicpm5_2b_ane_pal8", None)],
)
def test_a_hang_loads_then_writes_nothing_until_killed(model: str, config: SimArmConfig | None):
    arms = {model: config} if config else {}
    sim = SimulatedIPhone(SimConfig(arms=arms))
    pid = run(sim, env(model))
    assert kinds(log(sim)) == ["START", "LOAD"]
    assert sim.next_change_in() is None
    size = len(sim.read_container_file(BUNDLE, "Documents/sustain/t.log"))
    sim.advance(25 * 60)
    assert pid in sim.running()
    assert len(sim.read_container_file(BUNDLE, "Documents/sustain/t.log")) == size
    sim.terminate(pid)
    assert sim.running() == set()
    assert kinds(log(sim)) == ["START", "LOAD"]


@pytest.mark.parametrize(
    ("model", "config", "message"),
    [
        (ANE, SimArmConfig(profile=ANE, fault="load_error"), "ANE compile failed (Code=4097)"),
        (
            "qwen3_1_7b_zoo_iosgpu",
            None,
            'invalidState("Failed to find an extend function with the max context length of'
            ' 40960")',
        ),
    ],
)
def test_a_load_failure_writes_its_error_and_ends(
    model: str, config: SimArmConfig | None, message: str
):
    sim = SimulatedIPhone(SimConfig(arms={model: config} if config else {}))
    pid = run(sim, env(model))
    records = log(sim)
    assert kinds(records) == ["START", "ERROR", "END"]
    assert records[1].message == message and records[1]["arm"] == model
    assert records[2].fields == {"arm": model, "reason": "error", "trials": "0"}
    assert pid not in sim.running()


def test_a_gpu_timeout_strikes_at_its_time_into_the_trials():
    sim = faulty(GPU, "gpu_timeout", fault_at_s=30)
    run(sim, env(GPU))
    records = log(sim)
    warmup_done = float(next(r for r in records if r.kind == "TRIAL")["t"])
    assert sim.now == pytest.approx(warmup_done + 30, abs=0.01)
    assert kinds(records)[-2:] == ["ERROR", "END"]
    assert records[-2].message == "Metal GPU Timeout"
    timed = [r for r in records if r.kind == "TRIAL" and r["warmup"] == "0"]
    assert records[-1].fields == {"arm": GPU, "reason": "error", "trials": str(len(timed))}
    assert all(float(r["t"]) <= warmup_done + 30 for r in timed)
    assert len(timed) >= 4


LOG = "Documents/sustain/t.log"


def test_a_stall_writes_trials_until_its_time_then_nothing_while_alive():
    sim = faulty(ANE, "stall", fault_at_s=120)
    pid = run(sim, env(ANE))
    records = log(sim)
    warmup_done = float(next(r for r in records if r.kind == "TRIAL")["t"])
    assert sim.now == pytest.approx(warmup_done + 120, abs=0.01)  # it stopped at its time
    assert sim.next_change_in() is None
    assert kinds(records)[:2] == ["START", "LOAD"] and set(kinds(records)[2:]) == {"TRIAL"}
    timed = [r for r in records if r.kind == "TRIAL" and r["warmup"] == "0"]
    assert len(timed) >= 10 and all(float(r["t"]) <= warmup_done + 120 for r in timed)
    size = len(sim.read_container_file(BUNDLE, LOG))
    sim.advance(25 * 60)
    assert pid in sim.running()  # unlike a crash: alive, just silent
    assert len(sim.read_container_file(BUNDLE, LOG)) == size
    sim.terminate(pid)
    assert sim.running() == set()
    assert len(sim.read_container_file(BUNDLE, LOG)) == size


def test_a_stalled_log_is_the_start_of_the_healthy_one_and_the_same_every_time():
    healthy = faulty(ANE, "none")
    run(healthy, env(ANE))
    stalled = [faulty(ANE, "stall", fault_at_s=120) for _ in range(2)]
    for sim in stalled:
        run(sim, env(ANE))
    first, second = (sim.read_container_file(BUNDLE, LOG) for sim in stalled)
    assert first == second
    whole = healthy.read_container_file(BUNDLE, LOG)
    assert whole.startswith(first) and len(whole) > len(first)
    records = parse(first)
    warmup_done = float(next(r for r in records if r.kind == "TRIAL")["t"])
    missing = parse(whole[len(first) :])
    assert missing[0].kind == "TRIAL" and float(missing[0]["t"]) > warmup_done + 120


def test_a_stall_after_the_last_ab_trial_never_strikes():
    sim = faulty(ANE, "stall", fault_at_s=600)
    pid = run(sim, env(ANE, "ab", AB_TRIALS="3"))
    records = log(sim)
    assert records[-1].fields == {"arm": ANE, "reason": "done", "trials": "3"}
    assert pid not in sim.running()


def test_refuse_launch_refuses_the_first_launches_then_lets_one_through():
    sim = faulty(ANE, "refuse_launch", fault_count=2)
    for _ in range(2):
        refused = refusal(sim)
        assert refused is not None
        assert (refused.code, refused.reason, refused.transient) == (10002, "", True)
        sim.advance(5)
    assert refusal(sim) is None


def test_busy_refuses_an_arm_for_a_while_after_its_first_attempt():
    sim = faulty(ANE, "busy", fault_at_s=120)
    assert refusal(sim, GPU) is None  # another arm is not affected
    sim.advance(1)
    for _ in range(4):
        refused = refusal(sim)
        assert refused is not None
        assert (refused.code, refused.reason, refused.transient) == (10002, "Busy", True)
        sim.advance(30)
    assert refusal(sim) is None


def test_unplug_drops_the_cable_for_a_while_and_the_log_keeps_growing():
    sim = faulty(ANE, "unplug", fault_at_s=60, unplug_s=300)
    sim.launch(BUNDLE, env(ANE))
    sim.advance(59)
    assert sim.telemetry().plugged
    sim.advance(2)
    assert not sim.telemetry().plugged
    size = len(sim.container_files(BUNDLE)["Documents/sustain/t.log"])
    sim.advance(200)
    assert len(sim.container_files(BUNDLE)["Documents/sustain/t.log"]) > size
    assert sim.next_change_in() is not None
    sim.advance(100)
    assert sim.telemetry().plugged
    sim.advance(10)
    states = [r["battery_state"] for r in log(sim) if r.kind == "TRIAL"]
    assert states[0] == "charging" and "unplugged" in states and states[-1] == "charging"


def test_a_locked_phone_refuses_launches_for_good_until_unlocked():
    sim = SimulatedIPhone(SimConfig(locked=True))
    refused = refusal(sim)
    assert refused is not None
    assert (refused.code, refused.reason, refused.transient) == (10002, "Locked", False)
    sim.set_locked(False)
    assert refusal(sim) is None


def test_launches_right_after_an_install_are_refused_for_about_10_s():
    sim = SimulatedIPhone(SimConfig())
    running = sim.launch(BUNDLE, env(ANE))
    sim.advance(5)
    sim.install(BUNDLE)
    assert running not in sim.running()
    refused = refusal(sim)
    assert refused is not None and refused.code == 10002 and refused.transient
    sim.advance(5)
    assert refusal(sim) is not None
    sim.advance(5)
    assert refusal(sim) is None


def test_killing_an_app_mid_load_can_leave_the_phone_busy():
    sim = SimulatedIPhone(SimConfig(cold_cache=True, busy_after_kill_mid_load_s=90))
    pid = sim.launch(BUNDLE, env(ANE))
    sim.advance(10)
    sim.terminate(pid)
    refused = refusal(sim, GPU)
    assert refused is not None and refused.reason == "Busy"
    sim.advance(91)
    assert refusal(sim, GPU) is None


def test_refusal_faults_leave_an_idle_probe_alone():
    sim = faulty(ANE, "refuse_launch", fault_count=3)
    sim.launch(BUNDLE, {"AB_MODEL": ANE, "AB_MODE": "idle"})
    assert refusal(sim) is not None


def test_unplug_pulls_the_cable_on_the_first_launch_of_the_arm_only():
    sim = faulty(ANE, "unplug", fault_at_s=5, unplug_s=60)
    run(sim, env(ANE, "ab", AB_TRIALS="2"))
    sim.advance(120)
    assert sim.telemetry().plugged
    run(sim, env(ANE, "ab", AB_TRIALS="2"))
    assert sim.next_change_in() is None
    sim.advance(120)
    assert sim.telemetry().plugged
