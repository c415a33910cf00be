"""The sample recordings (recordings/, made by recordings/regenerate.py on the simulator)
carry what the simulator gives: the app's process telemetry and a closing summary with each
arm's process figures, so the README's screenshot and figures quoted from them have them."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

RECORDINGS = sorted((Path(__file__).parents[1] / "recordings").glob("*.jsonl"))
PROCESS = ("mem_peak_gb", "cpu_mean_pct", "gpu_mean_pct")


def test_there_are_the_five_samples() -> None:
    assert [p.stem for p in RECORDINGS] == ["sim-ab-2b", "sim-battery-1b", "sim-hang-2b",
                                            "sim-sustain-1b-v1", "sim-sustain-1b-v2"]  # fmt: skip


@pytest.mark.parametrize("recording", RECORDINGS, ids=lambda p: p.name)
def test_a_sample_carries_process_telemetry_and_its_summary_the_process_figures(
    recording: Path,
) -> None:
    lines = [json.loads(line) for line in recording.read_text().splitlines()]
    samples = [e for e in lines if e.get("kind") == "telemetry" and "mem_gb" in e]
    assert samples and all("cpu_pct" in e and "gpu_pct" in e for e in samples)
    assert lines[-1]["kind"] == "summary"
    ran = [arm for arm in lines[-1]["arms"] if arm["trials"]]
    assert ran and all(arm[key] is not None for arm in ran for key in PROCESS)


def regenerate_module() -> ModuleType:
    path = RECORDINGS[0].parent / "regenerate.py"
    spec = importlib.util.spec_from_file_location("regenerate", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("hang", "others", "status"), [(1, 0, 0), (0, 0, 1), (1, 2, 1)])
def test_regenerate_exits_1_when_a_run_ends_other_than_its_plan_is_made_for(
    hang: int, others: int, status: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """The hang's run fails by design (exit 1), the others pass; any other status is news
    (the runs stubbed: only their exit statuses matter here)."""
    regenerate = regenerate_module()
    runs: list[str] = []

    def run(words: list[str]) -> int:
        runs.append(Path(words[1]).stem)
        return hang if runs[-1] == "sim-hang-2b" else others

    assert regenerate.regenerate(run) == status
    assert runs == [p.stem for p in RECORDINGS]
    said = capsys.readouterr().err
    assert "sim-hang-2b.jsonl: exit " in said and ("(expected" in said) == bool(status)
