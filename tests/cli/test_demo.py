"""`anemon demo` end to end, in process: the bundled plan runs the battery protocol on the
simulated iPhone over the network, so the first screen a user sees measures energy."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from anemon.cli import main
from anemon.cli.demo import DEMO_SPEED
from tests.recording.helpers import lines

ARMS = ["minicpm5_1b_ane_pal8", "minicpm5_1b_gpu_int8"]


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> tuple[Path, str]:
    """The demo, headless at --speed max, recorded (once for the module): its recording and
    what it printed."""
    path = tmp_path_factory.mktemp("demo") / "demo.jsonl"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["demo", "--headless", "--speed", "max", "--record", str(path)]) == 0
    return path, out.getvalue()


def test_the_demo_ends_with_j_per_token_for_both_arms_none_charging(demo):
    path, out = demo
    summary = lines(path)[-1]
    assert summary["kind"] == "summary"
    figures = {arm["arm"]: arm for arm in summary["arms"]}
    assert sorted(figures) == ARMS
    for arm in figures.values():
        assert arm["j_per_token"] is not None and arm["energy_note"] is None
    table = out[out.rindex("demo-sustain-1b on sim") :]  # the closing arms table
    assert "J/token" in table and "charging" not in table
    for name in ARMS:
        row = next(line for line in table.splitlines() if name in line)
        assert f"{figures[name]['j_per_token']:.4f}" in row


def test_the_demo_records_each_arms_process_the_gpu_arm_busier_on_the_gpu(demo):
    path, _ = demo
    gpu: dict[str, list[float]] = {name: [] for name in ARMS}
    for r in lines(path):
        if r.get("kind") == "telemetry" and r.get("arm") in gpu and r.get("pid") is not None:
            assert r["cpu_pct"] is not None and r["mem_gb"] > 0
            gpu[r["arm"]].append(r["gpu_pct"])
    assert all(len(pcts) > 100 for pcts in gpu.values())  # one a second, for minutes
    assert min(gpu["minicpm5_1b_gpu_int8"]) > max(gpu["minicpm5_1b_ane_pal8"])


def test_the_simulated_operator_unplugs_before_the_first_arm_and_replugs_after_the_last(demo):
    _, out = demo
    said = [line.split("s ", 1)[1].strip() for line in out.splitlines() if "marker: " in line]
    assert said == [
        "marker: unplug the phone now (battery protocol)",
        "marker: simulated operator: unplugs the phone in 5 s",
        "marker: unplug wait: unplugged after 6 s",
        "marker: replug the phone now (battery protocol): the log is pulled once it is back",
        "marker: simulated operator: plugs the phone back in in 5 s",
        "marker: replug wait: replugged after 6 s",
    ]
    assert "on battery (unplugged)" in out  # the pre-flight's battery check


def test_the_demo_stays_a_demo_at_its_default_speed(demo):
    """Under a minute of wall time at the default speed (the session's own clock, virtual at
    --speed max)."""
    path, _ = demo
    records = lines(path)
    assert max(r["t"] for r in records[1:]) / DEMO_SPEED < 60


def test_the_readme_quotes_the_figures_the_demo_ends_with(demo):
    path, _ = demo
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    start = readme.index("The demo runs the [battery protocol]")
    paragraph = readme[start : readme.index("\n\n", start)]
    for arm in lines(path)[-1]["arms"]:
        assert f"{arm['j_per_token']:.4f}" in paragraph
