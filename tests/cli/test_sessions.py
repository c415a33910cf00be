"""`anemon sessions [DIR] [--format table|json]` end to end, in process."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from anemon.cli import main
from tests.recording.helpers import make_recording


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("demo") / "demo.jsonl"
    assert main(["demo", "--headless", "--speed", "max", "--record", str(path)]) == 0
    return path


def test_a_demo_recording_is_listed(capsys, tmp_path, demo):
    shutil.copy(demo, tmp_path / "demo.jsonl")
    code, out, err = run(capsys, "sessions", str(tmp_path), "--format", "json")
    assert code == 0 and err == ""
    (row,) = json.loads(out)
    assert row["tag"] == "demo-sustain-1b" and row["device"] == "Simulated iPhone"
    assert row["status"] == "done" and row["summary"] is True and row["version"] == 2
    assert row["arms"] == ["minicpm5_1b_ane_pal8", "minicpm5_1b_gpu_int8"]
    assert row["trials"] > 0 and row["os_build"]
    assert all(row["j_per_token"][arm] > 0 for arm in row["arms"])  # on battery
    assert row["energy_note"] == dict.fromkeys(row["arms"])


def test_the_table_lists_each_session_with_its_figures(capsys, tmp_path, demo):
    shutil.copy(demo, tmp_path / "demo.jsonl")
    make_recording(tmp_path / "killed.jsonl", summary=False, tag="lab")
    code, out, err = run(capsys, "sessions", str(tmp_path))
    assert code == 0 and err == ""
    for text in ("demo-sustain-1b", "minicpm5_1b_ane_pal8", "minicpm5_1b_gpu_int8", "done",
                 "0.064", "0.112", "Simulated iPhone", "lab", "no summary"):  # fmt: skip
        assert text in out
    assert "charging" not in out
    assert "killed.jsonl: the session did not close: no summary: run `anemon summary " in out


def test_a_changed_os_build_is_warned_about(capsys, tmp_path):
    make_recording(tmp_path / "one.jsonl", tag="lab", os_build="22A100",
                   created="2026-01-01T08:00:00+00:00")  # fmt: skip
    make_recording(tmp_path / "two.jsonl", tag="lab", os_build="22B83",
                   created="2026-01-02T08:00:00+00:00")  # fmt: skip
    code, out, err = run(capsys, "sessions", str(tmp_path))
    assert code == 0 and "22A100" in out and "22B83" in out
    assert err == (
        f"anemon: warning: {tmp_path / 'two.jsonl'}: OS build changed 22A100 → 22B83 since the "
        "previous session of lab: compile caches rebuild after an OS update\n"
    )


def test_garbage_in_the_middle_does_not_matter(capsys, tmp_path):
    """The listing reads the header and the closing summary, never the events between."""
    path = make_recording(tmp_path / "r.jsonl")
    text = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(text[0] + b"\x00garbage, not JSON\xff\n" * 10_000 + text[-1])
    code, out, err = run(capsys, "sessions", str(tmp_path), "--format", "json")
    (row,) = json.loads(out)
    assert code == 0 and err == "" and row["summary"] and row["trials"] == 6
    assert row["status"] == "done" and row["arms"] == ["ane_arm", "gpu_arm"]


def test_text_from_the_files_is_escaped(capsys, tmp_path):
    make_recording(tmp_path / "r.jsonl", tag="evil\x1b[2J", device="phone\x1b]52;c;x\x07")
    code, out, _ = run(capsys, "sessions", str(tmp_path))
    assert code == 0 and "\x1b" not in out and "\\x1b" in out


def test_an_empty_folder_says_so(capsys, tmp_path):
    assert run(capsys, "sessions", str(tmp_path)) == (0, f"no recordings in {tmp_path}\n", "")


@pytest.mark.parametrize("name", ["missing", "file"])
def test_a_bad_dir_is_one_line_exit_2(capsys, tmp_path, name):
    (tmp_path / "file").write_text("x")
    code, out, err = run(capsys, "sessions", str(tmp_path / name))
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"anemon: {tmp_path / name}: ")


def test_the_default_dir_is_anemon_recordings(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "sessions")
    assert code == 2 and "anemon-recordings: no such directory" in err
    (tmp_path / "anemon-recordings").mkdir()
    make_recording(tmp_path / "anemon-recordings" / "x.jsonl")
    code, out, _ = run(capsys, "sessions", "--format", "json")
    assert code == 0 and [r["path"] for r in json.loads(out)] == ["anemon-recordings/x.jsonl"]


def test_a_j_per_token_made_by_the_version_2_rules_is_marked(capsys, tmp_path):
    """The battery sample's closing summary follows the energy rules of version 3; the same
    summary without `summary_version` (written before them) has its J/token marked."""
    sample = Path(__file__).parents[2] / "recordings" / "sim-battery-1b.jsonl"
    *events, last = sample.read_text().splitlines()
    summary = json.loads(last)
    assert summary["kind"] == "summary" and summary.pop("summary_version") == 3
    (tmp_path / "new.jsonl").write_text(sample.read_text())
    (tmp_path / "old.jsonl").write_text("\n".join([*events, json.dumps(summary)]) + "\n")
    code, out, _ = run(capsys, "sessions", str(tmp_path), "--format", "json")
    rows = {Path(r["path"]).name: r for r in json.loads(out)}
    assert (rows["new.jsonl"]["summary_version"], rows["old.jsonl"]["summary_version"]) == (3, None)
    code, out, _ = run(capsys, "sessions", str(tmp_path))
    assert code == 0 and out.count("(v2 rules)") == 2  # the old one's two arms, not the new's


def test_an_arm_a_jetsam_ended_is_listed_with_its_reason(capsys, tmp_path):
    from anemon.events import CrashEvent, StartEvent, TrialEvent
    from anemon.feeds.live import closing_summary
    from anemon.recording.writer import Recorder, make_header
    from anemon.store import Session

    reason = "jetsam: per-process-limit at 2.2 GB"
    events = [
        StartEvent(t=0, wall=0, arm="big", tag="lab"),
        TrialEvent(t=5, wall=5, arm="big", trial=1, decode_tps=20.0, gen=10),
        CrashEvent(t=9, wall=9, arm="big", report="jetsam", reason=reason, file="J.ips"),
    ]
    session = Session.from_events(events)
    with Recorder(tmp_path / "r.jsonl", make_header(source="test", plan={"tag": "lab"})) as rec:
        for event in events:
            rec.write(event)
        rec.write(closing_summary(session, status="failed", tag="lab"))
    code, out, _ = run(capsys, "sessions", str(tmp_path), "--format", "json")
    assert code == 0 and json.loads(out)[0]["status_reason"] == {"big": reason}
    code, out, _ = run(capsys, "sessions", str(tmp_path))
    assert "big (failed: jetsam: per-process-limit at 2.2 GB)" in " ".join(out.split())


def test_an_arm_the_operator_aborted_is_listed_as_aborted_not_failed(capsys, tmp_path):
    """Issue 24: a run whose first arm the operator aborted (`a`) and whose second completed
    exits 1 and writes its summary's status "failed"; `sessions` lists it aborted, as
    `summary` gives that arm, in the table and the JSON alike."""
    from anemon.events import EndEvent, MarkerEvent, PhaseEvent, StartEvent, TrialEvent
    from anemon.feeds.live import closing_summary
    from anemon.recording.writer import Recorder, make_header
    from anemon.store import Session

    why = "the operator aborted the arm"
    events = [
        StartEvent(t=0, wall=0, arm="ane", tag="lab"),
        *(TrialEvent(t=t, wall=t, arm="ane", trial=t, decode_tps=50.0, gen=10) for t in (1, 2)),
        MarkerEvent(t=3, wall=3, arm="ane", source="operator", note="abort arm"),
        PhaseEvent(
            t=3,
            wall=3,
            arm="ane",
            source="controller",
            phase="aborted",
            reason=f"ane: aborted: {why}",
        ),
        StartEvent(t=10, wall=10, arm="gpu", tag="lab"),
        TrialEvent(t=11, wall=11, arm="gpu", trial=1, decode_tps=20.0, gen=10),
        EndEvent(t=12, wall=12, arm="gpu", reason="done", trials=1),
    ]
    session = Session.from_events(events)
    with Recorder(tmp_path / "r.jsonl", make_header(source="test", plan={"tag": "lab"})) as rec:
        for event in events:
            rec.write(event)
        rec.write(closing_summary(session, status="failed", tag="lab"))
    assert main(["summary", str(tmp_path / "r.jsonl"), "--format", "json"]) == 0
    arms = {a["arm"]: a["status"] for a in json.loads(capsys.readouterr().out)}
    assert arms == {"ane": "aborted", "gpu": "done"}
    code, out, _ = run(capsys, "sessions", str(tmp_path), "--format", "json")
    (row,) = json.loads(out)
    assert code == 0 and row["status"] == "aborted" and row["arm_status"] == arms
    assert row["status_reason"] == {"ane": why, "gpu": None}
    code, out, _ = run(capsys, "sessions", str(tmp_path))
    assert "failed" not in out and f"ane (aborted: {why})" in " ".join(out.split())
    assert out.count("aborted") == 3  # the arm's line (twice, with its reason), the status
