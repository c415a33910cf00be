"""Lab-note output: JSON and CSV figures rounded as the tables round them, no thousands
separators in CSV, `export` trials only unless told `--table telemetry`."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from anemon.analysis.render import DECIMALS
from anemon.cli import main

GROUPED = re.compile(r"\d,\d{3}")
"""A number with a thousands separator ("1,745.5"), which a spreadsheet reads as text."""
RECORDINGS = sorted((Path(__file__).parents[2] / "recordings").glob("*.jsonl"))


def places(value: float) -> int:
    text = repr(value)
    return len(text.split(".")[1].rstrip("0")) if "." in text and "e" not in text else 0


@pytest.mark.parametrize("source", RECORDINGS, ids=lambda p: p.name)
def test_summary_json_and_csv_carry_each_figure_to_its_decimals(
    source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["summary", "--format", "json", str(source)]) == 0
    arms = json.loads(capsys.readouterr().out)
    objects = [*arms, *(r for arm in arms for r in arm["rounds"])]
    noisy = [(key, value) for obj in objects for key, value in obj.items()
             if isinstance(value, float) and places(value) > DECIMALS.get(key, 0)]  # fmt: skip
    assert not noisy
    assert main(["summary", "--format", "csv", str(source)]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert rows and not [cell for row in rows for cell in row.values() if GROUPED.search(cell)]


def test_export_writes_the_trials_by_default_and_the_telemetry_when_told(
    capsys: pytest.CaptureFixture[str],
) -> None:
    source = str(next(p for p in RECORDINGS if p.name == "sim-battery-1b.jsonl"))
    assert main(["export", source, "--format", "csv"]) == 0
    trials = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert "kind" not in trials[0] and "power_w" not in trials[0] and trials[0]["decode_tps"]
    assert main(["export", source, "--format", "csv", "--table", "telemetry"]) == 0
    readings = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert "decode_tps" not in readings[0] and readings[0]["power_w"]
    assert main(["summary", "--format", "json", source]) == 0
    counted = sum(arm["trials"] for arm in json.loads(capsys.readouterr().out))
    warmups = sum(row["warmup"] == "True" for row in trials)
    assert len(trials) - warmups == counted  # every trial once, no reading among them
    assert all(places(float(row["t"])) <= 3 for row in trials + readings)


def test_the_parquet_hint_names_the_readmes_install_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import builtins

    from anemon.analysis.export import PARQUET_INSTALL, export_table, write_table
    from anemon.errors import AnemonError
    from anemon.store import Session

    real = builtins.__import__

    def no_pyarrow(name: str, *args: object, **kwargs: object) -> object:
        if name == "pyarrow":
            raise ImportError(name)
        return real(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    with pytest.raises(AnemonError) as refused:
        write_table(export_table(Session()), "parquet", tmp_path / "t.parquet")
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    assert PARQUET_INSTALL in str(refused.value) and f"`{PARQUET_INSTALL}`" in readme
