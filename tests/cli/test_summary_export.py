"""`anemon summary` and `anemon export` end to end, in process."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from anemon.cli import main

SPEC = Path(__file__).parents[1] / "data" / "spec_example.log"


def test_summary_table_of_the_spec_example(capsys):
    assert main(["summary", str(SPEC)]) == 0
    out = capsys.readouterr().out
    assert "minicpm5_1b_ane_pal8" in out and "75.8" in out and "3,902" in out


SAMPLE = Path(__file__).parents[2] / "recordings" / "sim-ab-2b.jsonl"


def test_summary_json_of_several_sources(capsys):
    assert main(["summary", "--format", "json", str(SPEC), str(SAMPLE)]) == 0
    arms = json.loads(capsys.readouterr().out)  # ONE document: a list of every source's arms
    assert [(a["source"], a["arm"]) for a in arms] == [
        (str(SPEC), "minicpm5_1b_ane_pal8"), (str(SPEC), "minicpm5_2b_ane_pal8"),
        (str(SAMPLE), "minicpm5_2b_ane"), (str(SAMPLE), "minicpm5_2b_gpu_int8"),
    ]  # fmt: skip


def test_summary_json_of_one_source_is_a_list_with_the_source(capsys):
    assert main(["summary", "--format", "json", str(SPEC)]) == 0
    arms = json.loads(capsys.readouterr().out)
    assert [a["source"] for a in arms] == [str(SPEC), str(SPEC)]


def test_summary_csv_of_several_sources_has_one_header_and_a_source_column(capsys):
    assert main(["summary", "--format", "csv", str(SPEC), str(SAMPLE)]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["source"], r["arm"]) for r in rows] == [
        (str(SPEC), "minicpm5_1b_ane_pal8"), (str(SPEC), "minicpm5_2b_ane_pal8"),
        (str(SAMPLE), "minicpm5_2b_ane"), (str(SAMPLE), "minicpm5_2b_gpu_int8"),
    ]  # fmt: skip
    assert main(["summary", "--format", "csv", str(SPEC)]) == 0
    assert capsys.readouterr().out.startswith("source,arm,trials,")


def test_summary_md_of_several_sources_titles_each_table(capsys):
    assert main(["summary", "--format", "md", str(SPEC), str(SAMPLE)]) == 0
    first, second = capsys.readouterr().out.split("\n\n### ")
    # each titled with its source, tag, device and date: those it knows (a raw log: none)
    assert first.startswith(f"### {SPEC}\n\n| arm |") and "minicpm5_1b_ane_pal8" in first
    with SAMPLE.open(encoding="utf-8") as f:
        made = json.loads(f.readline())["created"][:10]  # the header's date: regenerated, it moves
    assert second.startswith(f"{SAMPLE} · sim · {made}\n\n| arm |")
    assert "minicpm5_2b_gpu_int8" in second


def test_summary_table_of_several_sources_titles_each_table(capsys):
    assert main(["summary", str(SPEC), str(SAMPLE)]) == 0
    out = capsys.readouterr().out
    assert out.index(str(SPEC)) < out.index("minicpm5_1b_ane_pal8") < out.index(str(SAMPLE))
    assert out.index(str(SAMPLE)) < out.index("minicpm5_2b_gpu_int8")


def test_export_csv_and_parquet_agree(tmp_path, capsys):
    assert main(["export", str(SPEC), "--format", "csv"]) == 0
    csv_rows = capsys.readouterr().out.strip().splitlines()
    assert len(csv_rows) == 3  # header + warm-up + trial
    out = tmp_path / "t.parquet"
    assert main(["export", str(SPEC), "--format", "parquet", "-o", str(out)]) == 0
    table = pd.read_parquet(out)
    assert list(table["decode_tps"]) == [74.9, 75.8]
    assert list(table["thermal"]) == ["fair", "fair"]


def test_export_json_to_a_file(tmp_path):
    out = tmp_path / "t.json"
    assert main(["export", str(SPEC), "--format", "json", "-o", str(out)]) == 0
    rows = json.loads(out.read_text())
    assert rows[1]["warmup"] is False and rows[1]["trial"] == 1


def test_export_md_to_stdout(capsys):
    assert main(["export", str(SPEC), "--format", "md"]) == 0
    assert capsys.readouterr().out.startswith(f"### {SPEC} · trials\n\n| arm | t |")


def power_recording(tmp_path: Path, device: str = "pymobiledevice3") -> Path:
    """One arm on battery: three timed trials of 256 tokens, a reading every 10 s at 3-4 W."""
    from anemon.events import StartEvent, TelemetryEvent, TrialEvent
    from anemon.recording.writer import Recorder, make_header

    path = tmp_path / "power.jsonl"
    header = make_header(source="test", device={"kind": device, "udid": "X", "name": "phone"})
    with Recorder(path, header) as recorder:
        recorder.write(StartEvent(t=0.0, wall=0.0, arm="ane", line="START arm=ane"))
        for t, watts, battery in ((10.0, 3.0, 90.0), (20.0, 4.0, 89.0), (30.0, 4.0, 88.0)):
            recorder.write(TelemetryEvent(t=t, wall=t, power_w=watts, charging=False,
                                          plugged=False, battery=battery))  # fmt: skip
            recorder.write(TrialEvent(t=t, wall=t, arm="ane", trial=int(t), decode_tps=50.0,
                                      gen=256, battery=battery, battery_state="unplugged",
                                      thermal=1))  # fmt: skip
        recorder.write(TelemetryEvent(t=40.0, wall=40.0, battery=88.0))  # no power read
    return path


def test_summary_md_shows_j_per_token(tmp_path, capsys):
    assert main(["summary", "--format", "md", str(power_recording(tmp_path))]) == 0
    title, _, header, _, row = capsys.readouterr().out.splitlines()[:5]
    assert title.startswith("### ") and title.endswith("power.jsonl · pymobiledevice3")
    assert header.endswith("| power W | J/token |")
    # (30 + 35 + 40) J / 768 tokens: the span from the START at 0, 3 W held from the reading at 10
    assert row.endswith("| 3.50 | 0.1367 |")


def test_summary_json_and_csv_carry_the_energy_keys(tmp_path, capsys):
    path = str(power_recording(tmp_path))
    assert main(["summary", "--format", "json", path]) == 0
    (arm,) = json.loads(capsys.readouterr().out)
    assert {k: arm[k] for k in ("energy_j", "j_per_token", "tokens_per_battery_pct")} == {
        "energy_j": 105.0, "j_per_token": 0.1367, "tokens_per_battery_pct": 384.0,
    }  # fmt: skip
    assert arm["energy_note"] is None and arm["power_w_mean"] == pytest.approx(3.5)
    assert arm["summary_version"] == 3
    assert main(["summary", "--format", "csv", path]) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert row.endswith(
        ",3.5,105.0,0.1367,384.0,,incomplete,the log stops with no END,battery,,,,1,50.0,—,3"
    )
    assert row.startswith(f"{path},ane,")
    assert "power_w_mean,energy_j,j_per_token,tokens_per_battery_pct,energy_note" in header


def test_summary_of_a_sample_recording_made_while_charging_says_charging(capsys):
    sample = Path(__file__).parents[2] / "recordings" / "sim-ab-2b.jsonl"
    assert main(["summary", "--format", "json", str(sample)]) == 0
    arms = json.loads(capsys.readouterr().out)
    assert [a["energy_note"] for a in arms] == ["charging", "charging"]
    assert all(a["j_per_token"] is None for a in arms)


def test_export_carries_power_charging_and_plugged(tmp_path, capsys):
    path = str(power_recording(tmp_path))
    assert main(["export", path, "--format", "csv", "--table", "telemetry"]) == 0
    telemetry = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["power_w"], r["charging"], r["plugged"]) for r in telemetry] == [
        ("3.0", "False", "False"), ("4.0", "False", "False"), ("4.0", "False", "False"),
        ("", "", ""),
    ]  # fmt: skip
    out = tmp_path / "t.parquet"
    assert (
        main(["export", path, "--format", "parquet", "-o", str(out), "--table", "telemetry"]) == 0
    )
    readings = pd.read_parquet(out)
    assert str(readings["charging"].dtype) == "boolean" and readings["power_w"].dtype == "float64"
    assert readings["plugged"].tolist() == [False, False, False, pd.NA]
    assert main(["export", path, "--format", "parquet", "-o", str(out)]) == 0
    assert str(pd.read_parquet(out)["warmup"].dtype) == "boolean"
    assert main(["export", path, "--format", "json", "--table", "telemetry"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["charging"] for r in rows] == [False, False, False, None]


def test_a_simulated_run_on_battery_gives_j_per_token_end_to_end(tmp_path, capsys):
    """The simulated phone on battery, reached over the network, at max speed: the recording's
    power readings make a J/token figure for every arm."""
    plan = tmp_path / "plan.toml"
    plan.write_text(
        'tag = "energy-e2e"\n[device]\nkind = "sim"\nconnect = "network"\n'
        '[protocol]\nkind = "ab"\nrounds = 2\ntrials = 5\n'
        '[cooldown]\nmin_s = 60\nuntil = "fair"\ncap_s = 300\n'
        '[[arms]]\nname = "minicpm5_2b_ane"\n[[arms]]\nname = "minicpm5_2b_gpu_int8"\n'
        "[sim]\nplugged = false\n"
    )
    record = tmp_path / "run.jsonl"
    assert main(["run", str(plan), "--headless", "--speed", "max", "--record", str(record)]) == 0
    capsys.readouterr()
    assert main(["summary", "--format", "md", str(record)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"### {record} · sim · ")
    header = [cell.strip() for cell in lines[2].split("|")]
    watts_at, joules_at = header.index("power W"), header.index("J/token")
    for row in lines[4:6]:
        cells = row.split("|")
        assert float(cells[watts_at]) > 1.0 and 0.0 < float(cells[joules_at]) < 1.0


def test_summary_of_a_devicectl_recording_says_devicectl_reads_no_power(tmp_path, capsys):
    path = power_recording(tmp_path, device="devicectl")
    lines = path.read_text().splitlines()
    kept = [line for line in lines if '"telemetry"' not in line]  # devicectl reads none
    path.write_text("\n".join(kept) + "\n")
    assert main(["summary", "--format", "md", str(path)]) == 0
    assert "devicectl reads no power" in capsys.readouterr().out
    assert main(["summary", str(path)]) == 0
    assert "devicectl reads no power" in capsys.readouterr().out


# -- issue 21, part 2: an export never destroys a file ---------------------------------------

EVERY_FORMAT = ["csv", "json", "md", "parquet", "sqlite"]
MID_WRITE = """\
import resource, signal, sys
if sys.argv[1] == "killed":  # Python ignores SIGXFSZ: by default it kills, as a kill -9 would
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
from anemon.cli import main
resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))  # no file past 2 KiB: cut mid-row
sys.exit(main(sys.argv[2:]))
"""
"""An export that dies (`killed`) or fails (`failed`: EFBIG) 2 KiB into writing its file."""


@pytest.mark.parametrize("fmt", EVERY_FORMAT)
def test_export_will_not_write_over_its_source_under_another_name(tmp_path, capsys, fmt):
    """A hard link is the SOURCE: written to, the recording was destroyed."""
    source = tmp_path / "session.jsonl"
    source.write_bytes(SAMPLE.read_bytes())
    link = tmp_path / "out.data"
    os.link(source, link)
    assert main(["export", str(source), "--format", fmt, "-o", str(link)]) == 2
    err = capsys.readouterr().err
    assert err == f"anemon: cannot write {link}: it is the SOURCE; give another file name\n"
    assert source.read_bytes() == SAMPLE.read_bytes()


def test_an_output_through_a_file_says_it_is_not_a_folder(tmp_path, capsys):
    notes = tmp_path / "notes.txt"
    notes.write_text("mine\n")
    out = notes / "out.csv"
    assert main(["export", str(SAMPLE), "--format", "csv", "-o", str(out)]) == 2
    assert capsys.readouterr().err == f"anemon: cannot write {out}: {notes} is not a folder\n"
    assert notes.read_text() == "mine\n"


@pytest.mark.slow
@pytest.mark.parametrize("how", ["killed", "failed"])
@pytest.mark.parametrize("fmt", EVERY_FORMAT)
def test_an_export_that_dies_part_way_leaves_the_old_file_whole(tmp_path, fmt, how):
    out = tmp_path / f"out.{fmt}"
    out.write_text("the previous export, whole\n")
    done = subprocess.run(
        [sys.executable, "-c", MID_WRITE, how, "export", str(SAMPLE), "--format", fmt, "-o",
         str(out)],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},  # no .pyc past the limit
    )  # fmt: skip
    if how == "killed":
        assert done.returncode == -signal.SIGXFSZ, done.stderr  # it did die mid-write
    else:
        assert done.returncode == 2 and done.stderr.startswith(f"anemon: cannot write {out}: ")
        assert done.stderr.count("\n") == 1
        assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]  # nothing left beside
    assert out.read_text() == "the previous export, whole\n"


@pytest.mark.parametrize("command", [["summary"], ["export", "--format", "csv"]])
def test_a_recording_of_version_0_is_one_line_and_exit_2(tmp_path, capsys, command):
    lines = SAMPLE.read_text().splitlines(keepends=True)
    path = tmp_path / "v0.jsonl"
    path.write_text(json.dumps(json.loads(lines[0]) | {"version": 0}) + "\n" + "".join(lines[1:]))
    assert main([*command, str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == (
        f"anemon: {path}: recording version is 0, expected 1 to 2; the header is damaged or "
        "the file was not written by anemon\n"
    )
