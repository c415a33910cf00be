"""`anemon run A.toml B.toml`: several phones at once, headless (issue 12, part 1)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from anemon.cli import main
from anemon.cli.run import worst_status
from tests.control.helpers import one_arm


def plan_text(tag: str, udid: str | None, *, fault: str = "") -> str:
    device = f'kind = "sim"\nid = "{udid}"' if udid is not None else ""
    sim = f'[sim.arms.minicpm5_1b_ane_pal8]\nfault = "{fault}"\n' if fault else ""
    return one_arm(tag, device=device, extra="[guards]\nfirst_trial_timeout_s = 120\n" + sim)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # default recordings land here


def test_two_simulated_phones_run_headless_each_line_prefixed_and_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = write(tmp_path, "a.toml", plan_text("lab-a", "SIM-A"))
    b = write(tmp_path, "b.toml", plan_text("lab-b", "SIM-B"))
    status = main(["run", str(a), str(b), "--headless", "--speed", "max"])
    out, err = capsys.readouterr()
    assert status == 0
    lines = [line for line in out.splitlines() if re.match(r"\[SIM-[AB]\] +\d", line)]
    assert {line[:7] for line in lines} == {"[SIM-A]", "[SIM-B]"}
    for device in ("SIM-A", "SIM-B"):
        assert any(f"[{device}]" in line and "ended: " in line for line in lines)
    # one recording each, named after its plan's tag, with its own device's UDID
    notes = dict(re.findall(r"^(SIM-[AB]): recording to (\S+)$", err, re.MULTILINE))
    assert set(notes) == {"SIM-A", "SIM-B"}
    for device, tag in (("SIM-A", "lab-a"), ("SIM-B", "lab-b")):
        path = Path(notes[device])
        assert tag in path.name
        header = json.loads(path.read_text().splitlines()[0])
        assert header["device"]["udid"] == device


def test_the_worst_run_decides_the_exit_status(tmp_path: Path) -> None:
    a = write(tmp_path, "a.toml", plan_text("lab-a", "SIM-A"))
    b = write(tmp_path, "b.toml", plan_text("lab-b", "SIM-B", fault="hang"))
    assert main(["run", str(a), str(b), "--headless", "--speed", "max", "--no-record"]) == 1


@pytest.mark.parametrize(("udid_a", "udid_b"), [("SIM-A", "sim-a"), (None, None)])
def test_two_plans_on_the_same_device_exit_2_before_anything_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], udid_a: str | None, udid_b: str | None
) -> None:
    a = write(tmp_path, "a.toml", plan_text("lab-a", udid_a))
    b = write(tmp_path, "b.toml", plan_text("lab-b", udid_b))
    assert main(["run", str(a), str(b), "--headless", "--speed", "max"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert str(a) in err and str(b) in err
    assert not list(tmp_path.rglob("*.jsonl"))  # nothing recorded: nothing started


def test_record_file_with_several_plans_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = write(tmp_path, "a.toml", plan_text("lab-a", "SIM-A"))
    b = write(tmp_path, "b.toml", plan_text("lab-b", "SIM-B"))
    record = tmp_path / "one.jsonl"
    assert main(["run", str(a), str(b), "--headless", "--record", str(record)]) == 2
    assert "--record FILE names one recording" in capsys.readouterr().err
    assert not record.exists()


def test_worst_status_order() -> None:
    assert worst_status([0, 0]) == 0
    assert worst_status([0, 1]) == 1
    assert worst_status([1, 130, 0]) == 130
