"""`anemon export SOURCE --format sqlite -o OUT.db`: a real database, queried with sqlite3."""

from __future__ import annotations

import csv
import io
import sqlite3
from contextlib import closing
from pathlib import Path

import pandas as pd
import pytest

from anemon.analysis.export import arm_columns
from anemon.analysis.summary import ArmSummary
from anemon.cli import main

SAMPLE = Path(__file__).parents[2] / "recordings" / "sim-ab-2b.jsonl"
SPEC = Path(__file__).parents[1] / "data" / "spec_example.log"


def export(tmp_path: Path, source: Path = SAMPLE, name: str = "out.db") -> Path:
    out = tmp_path / name
    assert main(["export", str(source), "--format", "sqlite", "-o", str(out)]) == 0
    return out


def query(db: Path, sql: str) -> list[tuple]:
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute(sql).fetchall()


def test_the_tables_and_their_types(tmp_path):
    db = export(tmp_path)
    tables = {name for (name,) in query(db, "SELECT name FROM sqlite_master WHERE type='table'")}
    assert tables == {"sessions", "arms", "rounds", "trials", "telemetry"}
    types = dict(query(db, "SELECT name, type FROM pragma_table_info('trials')"))
    assert types["decode_tps"] == "REAL" and types["trial"] == "INTEGER"
    assert types["thermal"] == "TEXT" and types["warmup"] == "INTEGER"


def test_trials_per_arm_match_the_csv_export(tmp_path, capsys):
    db = export(tmp_path)
    capsys.readouterr()
    assert main(["export", str(SAMPLE), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))  # trials: the default
    expected: dict[str, int] = {}
    for row in rows:
        expected[row["arm"]] = expected.get(row["arm"], 0) + 1
    got = dict(query(db, "SELECT arm, COUNT(*) FROM trials GROUP BY arm"))
    assert got == expected and sum(got.values()) > 0
    first = rows[0]
    (cell,) = query(db, f"SELECT decode_tps FROM trials WHERE arm = '{first['arm']}' "
                        f"ORDER BY t LIMIT 1")  # fmt: skip
    assert first["decode_tps"] and cell[0] == pytest.approx(float(first["decode_tps"]))


def test_arms_join_trials_and_agree_with_the_summary(tmp_path, capsys):
    db = export(tmp_path)
    joined = query(
        db,
        "SELECT a.arm, a.trials, COUNT(t.t), a.decode_mean, AVG(t.decode_tps) FROM arms a "
        "JOIN trials t ON t.arm = a.arm AND t.warmup = 0 GROUP BY a.arm ORDER BY a.arm",
    )
    assert len(joined) == 2
    for _arm, trials, counted, mean, averaged in joined:
        assert trials == counted and mean == pytest.approx(averaged)
    capsys.readouterr()
    assert main(["summary", str(SAMPLE), "--format", "csv"]) == 0
    summary = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["arm"], int(r["trials"])) for r in summary] == [(a, n) for a, n, *_ in joined]
    rounds = query(db, "SELECT arm, COUNT(*), SUM(trials) FROM rounds GROUP BY arm ORDER BY arm")
    assert [(a, total) for a, _, total in rounds] == [(a, n) for a, n, *_ in joined]


def test_the_session_row(tmp_path):
    db = export(tmp_path)
    ((source, tag, device, backend, version, exported),) = query(
        db, "SELECT source, tag, device, backend, recording_version, exported_by FROM sessions"
    )
    assert source == str(SAMPLE) and tag and device == "Simulated iPhone" and backend == "sim"
    assert version == 2 and exported


def test_telemetry_is_its_own_table(tmp_path):
    db = export(tmp_path)
    ((count, nulls),) = query(db, "SELECT COUNT(*), SUM(t IS NULL) FROM telemetry")
    assert count > 0 and nulls == 0


def test_a_raw_log_exports_too(tmp_path):
    db = export(tmp_path, SPEC)
    assert query(db, "SELECT recording_version, device FROM sessions") == [(None, None)]
    assert query(db, "SELECT COUNT(*) FROM arms") == [(2,)]
    assert query(db, "SELECT DISTINCT summary_version FROM arms") == [(3,)]


def test_the_arm_columns_are_every_summary_key_with_a_safe_name():
    names = [name for name, _ in arm_columns()]
    assert names == [*(f.name for f in ArmSummary.__dataclass_fields__.values()), "summary_version"]
    assert all(name.isidentifier() and name.islower() for name in names)


def test_a_hostile_arm_name_is_data(tmp_path):
    log = tmp_path / "evil.log"
    arm = "a'); DROP TABLE trials; --"
    log.write_text(f"START arm={arm.replace(' ', '_')} compute=ane\n"
                   f"TRIAL arm={arm.replace(' ', '_')} trial=1 decode_tps=40 gen=64\n")  # fmt: skip
    db = export(tmp_path, log)
    assert query(db, "SELECT COUNT(*) FROM trials") == [(1,)]
    assert query(db, "SELECT arm FROM arms") == [(arm.replace(" ", "_"),)]


def test_sqlite_needs_an_output_file(tmp_path, capsys):
    assert main(["export", str(SAMPLE), "--format", "sqlite"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "-o OUT" in err


def test_an_existing_output_is_replaced_as_the_other_formats_do(tmp_path):
    out = tmp_path / "out.db"
    out.write_text("an older file, not a database")
    export(tmp_path)
    assert query(out, "SELECT COUNT(*) FROM sessions") == [(1,)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.db"]  # no temporary file left


def test_an_output_in_a_missing_folder_is_one_line(tmp_path, capsys):
    code = main(["export", str(SAMPLE), "--format", "sqlite", "-o", str(tmp_path / "no/x.db")])
    assert code == 2 and "no such directory" in capsys.readouterr().err


def stale_journal(folder: Path, mode: str) -> Path:
    """The `-wal` or hot `-journal` of an older database of 200 trials (a writer killed
    mid-transaction, a reader that still had it open): what SQLite finds beside a file."""
    old = folder / "old.db"
    with closing(sqlite3.connect(old, isolation_level=None)) as db:
        db.execute("PRAGMA synchronous=OFF")  # the journal counts its own pages
        if mode == "wal":
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA wal_autocheckpoint=0")
        db.execute("CREATE TABLE trials (n INTEGER, x TEXT)")
        db.executemany("INSERT INTO trials VALUES (?, ?)", [(i, "x" * 500) for i in range(200)])
        if mode == "journal":
            db.execute("BEGIN")
            db.execute("DELETE FROM trials")
        saved = folder / "saved"
        saved.write_bytes((folder / f"old.db-{mode}").read_bytes())  # before close deletes it
    return saved


@pytest.mark.parametrize("mode", ["journal", "wal"])
def test_a_stale_journal_beside_the_output_does_not_alter_the_new_database(tmp_path, mode):
    """SQLite applied OUT's leftover `-wal` or hot `-journal` to the new file: its rows were
    the old database's. They are removed when OUT is replaced."""
    saved = stale_journal(tmp_path, mode)
    out = tmp_path / "out.db"
    out.write_text("the previous export")
    (tmp_path / f"out.db-{mode}").write_bytes(saved.read_bytes())
    if mode == "wal":
        (tmp_path / "out.db-shm").write_bytes(b"\0" * 32768)
    export(tmp_path)
    expected = query(export(tmp_path, name="fresh.db"), "SELECT COUNT(*) FROM trials")
    assert expected[0][0] > 0
    assert query(out, "SELECT COUNT(*) FROM trials") == expected
    assert query(out, "PRAGMA integrity_check") == [("ok",)]
    assert not any(tmp_path.glob("out.db-*"))


def test_rows_go_to_the_database_a_chunk_at_a_time(tmp_path, monkeypatch):
    """A table's rows are made into records a chunk at a time, never all at once (a 100 MB
    recording's sqlite export held two lists of every row: 1.3 GiB), to the same database."""
    from anemon.analysis import export as export_module

    whole = export(tmp_path, name="whole.db")
    sizes: list[int] = []
    to_dict = pd.DataFrame.to_dict

    def counted(self: pd.DataFrame, *args: object, **kwargs: object) -> object:
        sizes.append(len(self))
        return to_dict(self, *args, **kwargs)

    monkeypatch.setattr(export_module, "_SQL_ROWS", 7)
    monkeypatch.setattr(pd.DataFrame, "to_dict", counted)
    chunked = export(tmp_path, name="chunked.db")
    assert sizes and max(sizes) <= 7
    for table in ("sessions", "arms", "rounds", "trials", "telemetry"):
        rows = f'SELECT * FROM "{table}"'
        assert query(chunked, rows) == query(whole, rows), table
