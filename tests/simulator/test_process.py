"""The app as the kernel sees it: footprint, CPU, GPU, and the jetsam past the memory limit."""

from __future__ import annotations

import json

import pytest

from anemon.simulator import SimArmConfig, SimConfig, SimulatedIPhone
from anemon.simulator.phone import CRASH_REPORTER
from anemon.simulator.process import GB, Usage

from .logparse import BUNDLE, env, kinds, log

ANE = "minicpm5_1b_ane_pal8"
GPU = "minicpm5_1b_gpu_int8"
BIG = "minicpm5_2b_gpu_int8"


def app_usage(sim: SimulatedIPhone, pid: int) -> Usage:
    return next(u for u in sim.usage() if u.pid == pid)


def test_the_notebooks_footprints_after_load() -> None:
    """Physical footprints the notebook measured (docs/domain.md), not the LOAD line's."""
    measured = {"qwen3_1_7b_ane": 1.7, "qwen3_1_7b_ane_6bit": 2.1,
                "minicpm5_2b_ane_6bit": 2.6, "minicpm5_2b_ane_pal8": 2.1}  # fmt: skip
    for model, gb in measured.items():
        sim = SimulatedIPhone(SimConfig())
        pid = sim.launch(BUNDLE, env(model))
        while b"LOAD" not in sim.container_files(BUNDLE).get("Documents/sustain/t.log", b""):
            sim.advance(0.05)
        assert app_usage(sim, pid).footprint_bytes / GB == pytest.approx(gb, abs=0.05), model


def test_the_footprint_climbs_while_loading_and_grows_while_generating() -> None:
    sim = SimulatedIPhone(SimConfig())
    pid = sim.launch(BUNDLE, env(BIG))
    sim.advance(0.3)
    before = app_usage(sim, pid).footprint_bytes / GB
    sim.advance(0.6)  # in the middle of its ~1 s load
    loading = app_usage(sim, pid)
    sim.advance(120)
    generating = app_usage(sim, pid)
    assert before < 0.1 < loading.footprint_bytes / GB < 2.9
    assert loading.cpu_pct >= 80  # one core compiling and mapping
    assert 2.9 < generating.footprint_bytes / GB < 2.9 * 1.06  # measured after load: est.
    assert generating.gpu_pct > 50 and 0 < generating.cpu_pct < 100


def test_an_ane_arm_keeps_the_gpu_quiet() -> None:
    sim = SimulatedIPhone(SimConfig())
    pid = sim.launch(BUNDLE, env(ANE))
    sim.advance(60)
    usage = app_usage(sim, pid)
    assert usage.gpu_pct < 10 and 1.9 <= usage.footprint_bytes / GB < 2.0
    names = {u.name for u in sim.usage()}
    assert {"BenchApp", "SpringBoard"} <= names


def test_a_jetsam_kills_the_app_silently_and_leaves_a_report() -> None:
    arm = SimArmConfig(profile=ANE, fault="jetsam", fault_at_s=20)
    sim = SimulatedIPhone(SimConfig(arms={ANE: arm}))
    pid = sim.launch(BUNDLE, env(ANE))
    sim.advance(300)
    assert pid not in sim.running()
    assert "END" not in kinds(log(sim)) and "ERROR" not in kinds(log(sim))
    ended = sim.exit_of(pid)
    assert ended is not None and (ended.signal, ended.reason) == (9, "per-process-limit")
    [(name, data)] = sim.container_files(CRASH_REPORTER).items()
    assert name.startswith("JetsamEvent-2026-09-15-10") and name.endswith(".ips")
    header, _, rest = data.decode().partition("\n")
    body = json.loads(rest)
    assert json.loads(header)["bug_type"] == "298"
    [app] = [p for p in body["processes"] if p["pid"] == pid]
    footprint = app["rpages"] * body["memoryStatus"]["pageSize"] / GB
    assert app["reason"] == "per-process-limit" and 3.3 < footprint < 3.6
    assert body["largestProcess"] == app["name"] == "BenchApp"
    [(process, line)] = sim.system_log
    assert process == "osanalyticshelper"
    assert line.startswith("Saved type '298(JetsamEvent)' report (1 of max 25) at /private/")
    assert line.endswith(name)


@pytest.mark.parametrize(("model", "killed"), [(BIG, True), (ANE, False)])
def test_a_lower_limit_kills_a_big_arm_as_it_loads(model: str, killed: bool) -> None:
    sim = SimulatedIPhone(SimConfig(memory_limit_gb=2.5))
    pid = sim.launch(BUNDLE, env(model))
    sim.advance(30)
    assert (pid not in sim.running()) is killed
    assert bool(sim.container_files(CRASH_REPORTER)) is killed
