"""Summaries of thousands of one-trial arms (issue 21): the table is made a line at a time,
as rich prints it, and `anemon summary` of 20,000 arms ends with every arm in it."""

from __future__ import annotations

import gc
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console
from rich.table import Table
from rich.text import Text

from anemon.analysis import summary as summary_module
from anemon.analysis.load import load_sessions
from anemon.analysis.render import (
    DROP_ORDER,
    STATUS,
    arm_json,
    fit_columns,
    footnotes,
    rich_table,
    table_columns,
)
from anemon.analysis.render import table_rows as summary_rows
from anemon.analysis.summary import ArmSummary, RoundSummary, summarize

from ..many_arms import arm_name, write_many_arms

DATA = Path(__file__).parents[1] / "data"
HANG_GUARD_S = 600.0
"""Only so that a summary that never ends fails the test instead of hanging it (it took a
minute and more on a busy machine before; a few seconds now)."""


def printed(renderable: object, width: int, colour: bool = False) -> str:
    console = Console(file=io.StringIO(), width=width, force_terminal=colour,
                      color_system="truecolor" if colour else None)  # fmt: skip
    console.print(renderable)
    out = console.file.getvalue()
    assert isinstance(out, str)
    return out


def rich_of(summaries: list[ArmSummary], width: int, title: str) -> Table:
    """rich's own table of the same cells and widths (what the summary printed before)."""
    names, rows = table_columns(summaries), summary_rows(summaries)
    shown, widths = fit_columns(names, rows, width, DROP_ORDER)
    assert widths is not None
    dropped = [names[i] for i in range(len(names)) if i not in shown]
    notes = footnotes(summaries)
    notes += ["not shown (too narrow): " + ", ".join(dropped)] if dropped else []
    table = Table(title=Text(title), caption=Text("\n".join(notes)) if notes else None,
                  header_style="bold", caption_justify="left")  # fmt: skip
    for i, w in zip(shown, widths, strict=True):
        justify = "left" if names[i] in (names[0], STATUS) else "right"
        table.add_column(Text(names[i]), justify=justify, width=w, overflow="fold")
    for row in rows:
        table.add_row(*(Text(row[i]) for i in shown))
    return table


@pytest.mark.parametrize("width", [100, 120, 160, 200, 300])
@pytest.mark.parametrize("source", ["spec_example.log", "many"])
def test_the_table_is_what_rich_prints_for_the_same_cells(
    source: str, width: int, tmp_path: Path
) -> None:
    path = write_many_arms(tmp_path / "many.log", 12) if source == "many" else DATA / source
    summaries = summarize(next(load_sessions([path])).session)
    assert printed(rich_table(summaries, "T [x]").table(width), width) == printed(
        rich_of(summaries, width, "T [x]"), width
    )


def test_summary_of_20000_one_trial_arms_lists_every_arm(tmp_path: Path) -> None:
    log = write_many_arms(tmp_path / "arms.log", 20_000)
    for form in ("table", "json"):
        done = subprocess.run(
            [sys.executable, "-m", "anemon", "summary", str(log), "--format", form],
            capture_output=True, text=True, timeout=HANG_GUARD_S, env={"COLUMNS": "200"},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        if form == "json":
            arms = [arm["arm"] for arm in json.loads(done.stdout)]
        else:
            arms = [
                line.split()[1] for line in done.stdout.splitlines() if line.startswith("│ arm")
            ]
        assert arms == [arm_name(i) for i in range(20_000)], form


def test_the_table_lays_out_no_cell_on_its_own(tmp_path: Path, monkeypatch) -> None:
    """rich's per-cell layout (`Console.render_lines`, once per cell of its tables) is not
    asked more for 400 arms than for 100: the table's work per arm is a line's."""
    calls = []
    render_lines = Console.render_lines

    def counted(console: Console, *args: object, **kwargs: object) -> object:
        calls.append(1)
        return render_lines(console, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Console, "render_lines", counted)
    asked = []
    for arms in (100, 400):
        log = write_many_arms(tmp_path / f"arms{arms}.log", arms)
        summaries = summarize(next(load_sessions([log])).session)
        calls.clear()
        lines = printed(rich_table(summaries, str(log)), 200).splitlines()
        assert sum(line.startswith("│ arm") for line in lines) == arms
        asked.append(len(calls))
    assert asked[0] == asked[1]


def test_what_was_read_is_out_of_the_collectors_reach(tmp_path: Path) -> None:
    """The session read is frozen (`gc.freeze`): a full collection while it is summarized does
    not scan it again (for 20,000 one-trial arms that one collection was a third of the
    summary's CPU)."""
    before = gc.get_freeze_count()
    loaded = next(load_sessions([write_many_arms(tmp_path / "arms.log", 50)]))
    assert gc.get_freeze_count() >= before + len(loaded.session.arms)


def test_an_arms_json_makes_each_round_once(tmp_path: Path, monkeypatch) -> None:
    """A round's JSON object is made once per arm, not made and then made again rounded."""
    summaries = summarize(next(load_sessions([write_many_arms(tmp_path / "a.log", 30)])).session)
    made = []
    to_json = RoundSummary.to_json

    def counted(self: RoundSummary) -> dict[str, object]:
        made.append(1)
        return to_json(self)

    monkeypatch.setattr(RoundSummary, "to_json", counted)
    objects = [arm_json(s) for s in summaries]
    assert len(made) == sum(len(s.rounds) for s in summaries) == 30
    assert all(len(o["rounds"]) == 1 for o in objects)  # type: ignore[arg-type]


def test_a_one_round_arm_is_figured_once(tmp_path: Path, monkeypatch) -> None:
    """An arm of one launch takes its means and thermal figures from its only round's, not
    figured again over the same trials (a log of thousands of one-trial arms)."""
    session = next(load_sessions([write_many_arms(tmp_path / "a.log", 20)])).session
    expected = summarize(session)
    calls = []
    thermal = summary_module._thermal

    def counted(trials: dict[str, object]) -> object:
        calls.append(1)
        return thermal(trials)  # type: ignore[arg-type]

    monkeypatch.setattr(summary_module, "_thermal", counted)
    assert summarize(session) == expected
    assert len(calls) == 20


def test_what_was_read_is_frozen_before_collections_resume(tmp_path: Path, monkeypatch) -> None:
    """Frozen while the collector is still paused: the first collection after the pause would
    otherwise scan every object read (~0.2 s of reading 20,000 one-trial arms)."""
    paused: list[bool] = []
    freeze = gc.freeze

    def watched() -> None:
        paused.append(not gc.isenabled())
        freeze()

    monkeypatch.setattr(gc, "freeze", watched)
    next(load_sessions([write_many_arms(tmp_path / "arms.log", 20)]))
    assert paused == [True]
