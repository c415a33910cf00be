"""A/B rows agree with themselves (issue 24 item 6): in every multi-round arm of the sample
recordings, the thermal start → end, "serious at" and serious share a row shows come from
the same trials, round by round. The expected figures are read from the recording's events
here, not from the summary."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

from anemon.analysis import render
from anemon.analysis.load import load_sessions
from anemon.analysis.summary import summarize
from anemon.events import StartEvent, TrialEvent, thermal_name
from anemon.recording.reader import open_source

RECORDINGS = sorted((Path(__file__).parents[2] / "recordings").glob("*.jsonl"))


@dataclass(frozen=True, slots=True)
class Trial:
    thermal: int | None
    app_t: float | None


def rounds_of(path: Path) -> dict[str, list[list[Trial]]]:
    """Each arm's timed trials, one list per launch (START), from the events themselves."""
    rounds: dict[str, list[list[Trial]]] = defaultdict(list)
    for event in open_source(path):
        if isinstance(event, StartEvent):
            rounds[event.arm].append([])
        elif isinstance(event, TrialEvent) and not event.warmup:
            arm = rounds[event.arm]
            if not arm:
                arm.append([])
            arm[-1].append(Trial(event.thermal, event.app_t))
    return rounds


def expected(trials: list[Trial]) -> tuple[str, str, str]:
    """The thermal, serious at and serious share cells of one round's trials."""
    known = [x.thermal for x in trials if x.thermal is not None]
    serious = [x.app_t for x in trials if x.thermal is not None and x.thermal >= 2]
    thermal = f"{thermal_name(known[0])} → {thermal_name(known[-1])}" if known else "— → —"
    at = "—" if not serious or serious[0] is None else f"{serious[0]:.0f} s"
    share = "—" if not known else f"{100 * round(len(serious) / len(known), 3):.0f} %"
    return thermal, at, share


MULTI_ROUND = [
    (path, arm)
    for path in RECORDINGS
    for arm, launches in rounds_of(path).items()
    if len(launches) > 1
]


def test_the_samples_have_a_multi_round_arm():
    assert MULTI_ROUND, "no sample recording runs an arm in several rounds"


@pytest.mark.parametrize(("path", "arm"), MULTI_ROUND, ids=lambda x: getattr(x, "name", x))
def test_thermal_figures_of_a_row_come_from_the_same_round(path: Path, arm: str) -> None:
    summaries = summarize(next(load_sessions([path])).session)
    names = render.table_columns(summaries)
    (row,) = (r for r, s in zip(render.table_rows(summaries), summaries, strict=True)
              if s.arm == arm)  # fmt: skip
    cell = dict(zip(names, row, strict=True))
    shown = list(zip(*(cell[n].split(" / ") for n in ("thermal", "serious at", "serious share")),
                     strict=True))  # fmt: skip
    assert shown == [expected(trials) for trials in rounds_of(path)[arm]]
