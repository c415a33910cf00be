"""`anemon summary` and `anemon export` end to end, in process."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from anemon.cli import main

SPEC = Path(__file__).parents[1] / "data" / "spec_example.log"


def test_summary_table_of_the_spec_example(capsys):
    assert main(["summary", str(SPEC)]) == 0
    out = capsys.readouterr().out
    assert "minicpm5_1b_ane_pal8" in out and "75.8" in out and "3,902" in out


def test_summary_json_of_several_sources(capsys):
    assert main(["summary", "--format", "json", str(SPEC), str(SPEC)]) == 0
    out = capsys.readouterr().out
    first = json.loads(out[: len(out) // 2])
    assert [a["arm"] for a in first] == ["minicpm5_1b_ane_pal8", "minicpm5_2b_ane_pal8"]


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
    assert capsys.readouterr().out.startswith("| kind | arm | t |")
