"""`print_table`, what `anemon summary` prints a table with: the bytes rich's cropped print
of `rich_table` gives, at every width, without rich measuring each line of a table again."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console
from rich.segment import Segment

from anemon.analysis import render
from anemon.analysis.load import load_sessions
from anemon.analysis.render import print_table, rich_table
from anemon.analysis.summary import summarize
from anemon.cli import main

from ..many_arms import write_many_arms

ROOT = Path(__file__).parents[2]
SOURCES = sorted((ROOT / "recordings").glob("*.jsonl")) + sorted(
    (ROOT / "tests/data").glob("*.log")
)


ODD_NAMES = ("日本語の腕", "a\u200db", "x\ufe0f", "—long—name—", "e\u0301", "🙂🙂🙂")
"""Arm names whose width is not their length: wide, zero-width joined, emoji-presented."""


def _odd_log(path: Path) -> Path:
    lines = []
    for i, name in enumerate(ODD_NAMES):
        lines += [f"START arm={name} model=M compute=ane bits=8 mode=sustain p=128 g=256",
                  f"TRIAL arm={name} trial=0 warmup=0 t={i + 1}.0 prompt_tokens=128 "
                  f"prompt_tps=3000.0 decode_tps=10.0 gen=256 battery=90 thermal=fair",
                  f"END arm={name} reason=done trials=1"]  # fmt: skip
    path.write_text("\n".join(lines) + "\n")
    return path


def _console(width: int) -> Console:
    return Console(file=io.StringIO(), width=width, highlight=False)


def _text(console: Console) -> str:
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert isinstance(out, str)
    return out


@pytest.mark.parametrize("width", [20, 40, 60, 80, 120, 160, 200])
@pytest.mark.parametrize("source", [*SOURCES, "many", "odd"], ids=lambda s: getattr(s, "name", s))
def test_print_table_is_richs_cropped_print(source: Path | str, width: int, tmp_path: Path) -> None:
    made = {"many": lambda: write_many_arms(tmp_path / "many.log", 30),
            "odd": lambda: _odd_log(tmp_path / "odd.log")}  # fmt: skip
    path = made[source]() if isinstance(source, str) else source
    assert isinstance(path, Path)
    summaries = summarize(next(load_sessions([path])).session)
    cropped, ours = _console(width), _console(width)
    cropped.print(rich_table(summaries, str(path), "simulator"))
    print_table(ours, summaries, str(path), "simulator")
    assert _text(ours) == _text(cropped)


def test_the_summarys_table_is_not_measured_again_line_by_line(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    """rich's crop measures every line it prints (a character at a time for a line with a
    "—"); the summary's table, laid out within the console's width, is not cropped."""
    cropped: list[int] = []
    split = Segment.split_and_crop_lines.__func__  # type: ignore[attr-defined]

    def counted(cls: type[Segment], *args: object, **kwargs: object) -> object:
        cropped.append(1)
        return split(cls, *args, **kwargs)

    monkeypatch.setattr(Segment, "split_and_crop_lines", classmethod(counted))
    monkeypatch.setenv("COLUMNS", "200")
    log = write_many_arms(tmp_path / "arms.log", 40)
    assert main(["summary", str(log)]) == 0
    assert capsys.readouterr().out.count("│ arm") == 40
    assert cropped == []


def _measured(tmp_path: Path, monkeypatch, arms: int) -> tuple[int, int]:
    """How many cells `fit_columns` measures, and how many cell lines the table justifies,
    for a table of `arms` one-trial arms (caches cleared first)."""
    for cached in (render._one_line, render._wrap, render._justify, render._padded):
        cached.cache_clear()  # type: ignore[attr-defined]
    counts = {"_one_line": 0, "_justify": 0}
    for name in counts:
        original = getattr(render, name)

        def counted(*args: object, _name: str = name, _original=original) -> object:
            counts[_name] += 1
            return _original(*args)

        monkeypatch.setattr(render, name, counted)
    log = write_many_arms(tmp_path / f"arms{arms}.log", arms)
    print_table(_console(200), summarize(next(load_sessions([log])).session), str(log))
    monkeypatch.undo()
    return counts["_one_line"], counts["_justify"]


def test_a_column_is_measured_and_padded_once_per_distinct_cell(
    tmp_path: Path, monkeypatch
) -> None:
    """A column repeats its figures row after row: 300 more arms are 300 more cells measured
    and justified (their names), not 300 more of every column's."""
    few, many = _measured(tmp_path, monkeypatch, 100), _measured(tmp_path, monkeypatch, 400)
    assert many[0] - few[0] == 300
    assert many[1] - few[1] == 300
