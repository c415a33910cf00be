"""The arms table's J/token column: the figure, or why it is withheld, kept up to date live."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import numpy as np
import pytest
from textual.app import App, ComposeResult
from textual.pilot import Pilot

from anemon.analysis.summary import EnergyReadings
from anemon.events import Event, StartEvent, TelemetryEvent, TrialEvent
from anemon.store import Session
from anemon.ui import arms_table
from anemon.ui.arms_table import BRIEF, ArmsTable


class Tables(App[None]):
    def compose(self) -> ComposeResult:
        yield ArmsTable(id="wide")
        yield ArmsTable(BRIEF, id="brief")


def trial(t: float, arm: str, state: str = "unplugged") -> TrialEvent:
    return TrialEvent(t=t, wall=t, arm=arm, trial=int(t), decode_tps=50.0, gen=100,
                      battery=90.0, battery_state=state, thermal=1)  # fmt: skip


def watts(t: float, w: float, charging: bool = False) -> TelemetryEvent:
    return TelemetryEvent(t=t, wall=t, power_w=w, charging=charging, plugged=charging)


EVENTS: list[Event] = [
    StartEvent(t=0, wall=0, arm="plugged"), trial(1, "plugged", "charging"),
    trial(2, "plugged", "charging"), watts(1.5, 5.0, charging=True),
    StartEvent(t=11, wall=11, arm="battery"), trial(11, "battery"), watts(11, 3.0),
    watts(21, 5.0), trial(21, "battery"),
    StartEvent(t=60, wall=60, arm="unread"), trial(61, "unread"), trial(71, "unread"),
]  # fmt: skip


def j_per_token(table: ArmsTable, arm: str) -> str:
    return table.get_row(arm)[-1].plain


async def test_j_per_token_or_why_not_in_both_tables() -> None:
    app = Tables()
    async with app.run_test(size=(120, 20)) as pilot:
        session = Session.from_events(EVENTS)
        for table in app.query(ArmsTable):
            table.show(session)
        await pilot.pause()
        for table in app.query(ArmsTable):
            assert table.ordered_columns[-1].key.value == "J/token"
            assert j_per_token(table, "plugged") == "charging"
            assert j_per_token(table, "battery") == "0.2000"  # 40 J / 200 tokens
            assert j_per_token(table, "unread") == "no power"


async def test_new_readings_alone_update_the_energy_figures() -> None:
    app = Tables()
    async with app.run_test(size=(120, 20)) as pilot:
        session = Session.from_events([StartEvent(t=1, wall=1, arm="a"), trial(1, "a"),
                                       watts(1, 2.0), trial(11, "a")])  # fmt: skip
        table = app.query_one("#wide", ArmsTable)
        table.show(session)
        await pilot.pause()
        assert j_per_token(table, "a") == "too short"
        session.add(watts(11, 4.0))  # a reading inside the span, no new trial
        table.show(session)
        await pilot.pause()
        assert j_per_token(table, "a") == "0.1500"  # 30 J / 200 tokens
        session.add(watts(12, 4.0, charging=True))  # after the last trial: outside the span
        table.show(session)
        await pilot.pause()
        assert j_per_token(table, "a") == "0.1500"
        session.add(trial(13, "a"))  # the span now holds the charging reading
        table.show(session)
        await pilot.pause()
        assert j_per_token(table, "a") == "charging"


async def test_the_brief_table_fits_the_compact_layout_with_real_figures() -> None:
    """Two rounds per arm ("55.1 / 55.9"), "fair → serious", "charging": all whole in 78
    columns (80 less the compact layout's border)."""
    from pathlib import Path

    from anemon.recording.reader import open_source

    sample = Path(__file__).parents[2] / "recordings" / "sim-ab-2b.jsonl"
    app = Tables()
    async with app.run_test(size=(80, 20)) as pilot:
        table = app.query_one("#brief", ArmsTable)
        table.show(Session.from_events(open_source(sample)))
        await pilot.pause()
        assert table.virtual_size.width <= 78
        assert j_per_token(table, "minicpm5_2b_gpu_int8") == "charging"


def arm_cell(table: ArmsTable, arm: str) -> str:
    return table.get_row(arm)[0].plain


async def test_the_arm_cell_shows_a_status_that_is_not_done() -> None:
    """Beside the name: failed by the watchdog, aborted; the arm running now (no END yet) is
    not called incomplete until another arm takes over."""
    from anemon.events import EndEvent, ErrorEvent, MarkerEvent

    app = Tables()
    async with app.run_test(size=(120, 20)) as pilot:
        session = Session.from_events([StartEvent(t=0, wall=0, arm="hung"), trial(1, "hung")])
        tables = list(app.query(ArmsTable))
        for table in tables:
            table.show(session)
        await pilot.pause()
        assert [arm_cell(table, "hung") for table in tables] == ["hung", "hung"]
        later: list[Event] = [
            ErrorEvent(t=400, wall=400, arm="hung", source="controller", message="no trial",
                       line="anemon: ERROR: no trial"),
            StartEvent(t=500, wall=500, arm="ok"), trial(501, "ok"),
            EndEvent(t=502, wall=502, arm="ok", reason="done"),
            StartEvent(t=600, wall=600, arm="stopped"), trial(601, "stopped"),
            trial(602, "stopped"), MarkerEvent(t=603, wall=603, note="abort arm"),
        ]  # fmt: skip
        for event in later:
            session.add(event)
        for table in tables:
            table.show(session)
        await pilot.pause()
        for table in tables:
            assert arm_cell(table, "hung") == "hung (failed after 1 trial)"
            assert arm_cell(table, "ok") == "ok"
            assert arm_cell(table, "stopped") == "stopped (aborted after 2 trials)"


async def test_an_arm_left_with_no_end_is_incomplete_once_another_runs() -> None:
    app = Tables()
    async with app.run_test(size=(120, 20)) as pilot:
        session = Session.from_events([StartEvent(t=0, wall=0, arm="a"), trial(1, "a")])
        table = app.query_one("#wide", ArmsTable)
        table.show(session)
        await pilot.pause()
        assert arm_cell(table, "a") == "a"
        session.add(StartEvent(t=10, wall=10, arm="b"))
        table.show(session)
        await pilot.pause()
        assert arm_cell(table, "a") == "a (incomplete after 1 trial)"
        assert arm_cell(table, "b") == "b"


def column(table: ArmsTable, arm: str, name: str) -> str:
    keys = [c.key.value for c in table.ordered_columns]
    return table.get_row(arm)[keys.index(name)].plain


async def test_burst_to_sustained_and_retained_live() -> None:
    """33 tok/s for the first minute, 22 from the eighth on (the public ANE anchor): the wide
    table shows "33.0 → 22.0" and "66.7 %", the brief one burst → sustained; an arm under
    180 s has no sustained figure yet, and gets one as its trials come."""
    app = Tables()
    async with app.run_test(size=(120, 20)) as pilot:
        events: list[Event] = [StartEvent(t=0, wall=0, arm="ane")]
        for i in range(61):  # el 0..600
            el = 10.0 * i
            decode = 33.0 if el <= 60 else 22.0 if el >= 480 else 33.0 - 11.0 * (el - 60) / 420
            events.append(TrialEvent(t=el + 5, wall=el + 5, arm="ane", trial=i, app_t=el + 3,
                                     decode_tps=decode, gen=256, thermal=1))  # fmt: skip
        session = Session.from_events(events[:15])  # el 0..130
        wide, brief = app.query_one("#wide", ArmsTable), app.query_one("#brief", ArmsTable)
        for table in (wide, brief):
            table.show(session)
        await pilot.pause()
        assert column(wide, "ane", "burst → sust") == "33.0 → —"
        assert column(wide, "ane", "retained") == "—"
        for event in events[15:]:
            session.add(event)
        for table in (wide, brief):
            table.show(session)
        await pilot.pause()
        assert column(wide, "ane", "burst → sust") == "33.0 → 22.0"
        assert column(wide, "ane", "retained") == "66.7 %"
        assert column(brief, "ane", "burst → sust") == "33.0 → 22.0"


def rows(table: ArmsTable) -> dict[str, list[str]]:
    return {str(key.value): [c.plain for c in table.get_row(key)] for key in table.rows}


async def test_a_big_arm_is_summarized_off_the_loop_with_the_same_figures(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`off_loop`: an arm past OFF_LOOP_TRIALS is summarized in a thread worker; its row is
    put when the worker is done, with the figures the synchronous path gives; trials that
    came while it ran are summarized next, so the row ends with the latest data."""
    monkeypatch.setattr(arms_table, "OFF_LOOP_TRIALS", 2)
    monkeypatch.setattr(arms_table, "SUMMARY_GAP_S", 0.0)  # the re-check at once
    app = Tables()
    async with app.run_test(size=(120, 20)) as pilot:
        session = Session.from_events([*EVENTS, trial(45, "unread")])
        wide, brief = app.query_one("#wide", ArmsTable), app.query_one("#brief", ArmsTable)
        wide.show(session, off_loop=True)
        assert wide.row_count == 2  # "plugged" and "battery": two trials each, on the loop
        assert wide.pending == {"unread"}
        session.add(trial(51, "unread"))  # while the worker runs on its copy
        wide.show(session, off_loop=True)  # "unread" is left to its worker
        for _ in range(20):  # the first result, then the re-check it starts
            await app.workers.wait_for_complete()
            await pilot.pause()
            if not wide.pending:
                break
        assert not wide.pending
        reference = ArmsTable(id="reference")
        await app.mount(reference)
        reference.show(session)  # the synchronous path, on the same session
        await pilot.pause()
        assert rows(wide) == rows(reference)
        assert column(wide, "unread", "trials") == "4"
        assert brief.row_count == 0  # each table keeps its own rows


async def test_a_summary_worker_begins_once_the_round_is_painted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Begun within the round that asked for it, the worker ran beside the charts drawn after
    the table, and the loop waited for the GIL at each of their numpy calls."""
    monkeypatch.setattr(arms_table, "OFF_LOOP_TRIALS", 2)
    app = Tables()
    async with app.run_test(size=(120, 20)) as pilot:
        session = Session.from_events([*EVENTS, trial(81, "unread")])
        table = app.query_one("#wide", ArmsTable)
        table.show(session, off_loop=True)
        assert table.pending == {"unread"} and not app.workers  # asked for, not begun
        await summarized(pilot, table)
        assert column(table, "unread", "trials") == "3"


async def summarized(pilot: Pilot[None], table: ArmsTable) -> None:
    """Every worker done and its row put (each result may start the next look)."""
    for _ in range(20):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        if not table.pending:
            return
    raise AssertionError(f"still summarizing {table.pending}")


@asynccontextmanager
async def waiting_arm(
    monkeypatch: pytest.MonkeyPatch, gap_s: float
) -> AsyncIterator[tuple[Pilot[None], ArmsTable, Session]]:
    """A table whose big arm "unread" was summarized in a thread (3 trials shown), then got a
    fourth trial and was shown again within `gap_s` of that summary."""
    monkeypatch.setattr(arms_table, "OFF_LOOP_TRIALS", 2)
    monkeypatch.setattr(arms_table, "SUMMARY_GAP_S", gap_s)
    app = Tables()
    async with app.run_test(size=(120, 20)) as pilot:
        session = Session.from_events([*EVENTS, trial(81, "unread")])
        table = app.query_one("#wide", ArmsTable)
        table.show(session, off_loop=True)
        await summarized(pilot, table)
        assert column(table, "unread", "trials") == "3"
        session.add(trial(91, "unread"))
        table.show(session, off_loop=True)
        yield pilot, table, session


async def test_a_big_arm_is_summarized_in_a_thread_again_only_after_a_gap_or_when_hurried(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A replay at max grew its arm at every round, so a summary always ran beside the loop.
    Within SUMMARY_GAP_S of the last, the arm waits (its row as it was); a forced draw
    (`hurry`: a seek) summarizes it at once."""
    async with waiting_arm(monkeypatch, 3600.0) as (pilot, table, session):
        assert not table.pending and table.look_again is not None  # within the gap: waits
        await pilot.pause()
        assert column(table, "unread", "trials") == "3"
        table.show(session, off_loop=True, hurry=True)
        assert table.pending == {"unread"}
        await summarized(pilot, table)
        assert column(table, "unread", "trials") == "4"


async def test_an_arm_that_waited_out_its_gap_is_summarized_with_no_new_data(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The last trials of a replay that then ends (no draw comes after): the table looks
    again when the gap is up, by itself."""
    async with waiting_arm(monkeypatch, 0.2) as (pilot, table, _):  # no show after this
        for _ in range(100):  # the gap's timer, then the worker (at most ~10 s)
            await pilot.pause(0.1)
            if column(table, "unread", "trials") == "4":
                break
        assert column(table, "unread", "trials") == "4"
        assert table.look_again is None


async def test_a_worker_of_a_session_no_longer_shown_is_ignored(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(arms_table, "OFF_LOOP_TRIALS", 0)
    app = Tables()
    async with app.run_test(size=(120, 20)) as pilot:
        table = app.query_one("#wide", ArmsTable)
        table.show(Session.from_events(EVENTS), off_loop=True)
        other = Session.from_events([StartEvent(t=0, wall=0, arm="z"), trial(1, "z")])
        table.show(other)  # synchronous: the new session's rows at once
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert list(rows(table)) == ["z"]


def test_a_frozen_copy_does_not_follow_the_arm_and_leaves_it_free_to_grow() -> None:
    session = Session.from_events(EVENTS)
    arm = session.arms["battery"]
    frozen = arms_table.frozen_copy(arm, len(arm))
    view = np.frombuffer(frozen.columns["t"])  # a worker's numpy view of the copy
    session.add(trial(22, "battery"))  # the original grows while the view is held
    assert len(arm) == 3 and len(frozen) == 2 and view.tolist() == [11.0, 21.0]
    assert frozen.battery_states() == ["unplugged", "unplugged"]
    late = arms_table.frozen_copy(arm, 2)  # a worker copies later the rows counted on the loop
    assert len(late) == 2 and len(late.battery_state) == 2
    # nothing a garbage collection walks item by item (a copy a second of a list of a million
    # states was: full collections held a replay's event loop for ~100 ms)
    for held in (frozen.battery_state, *frozen.columns.values()):
        assert len(gc.get_referents(held)) <= 1  # its type at most, never its items


def test_frozen_samples_keep_the_readings_they_were_taken_with() -> None:
    session = Session.from_events([watts(1, 2.0), watts(2, 3.0)])
    samples = EnergyReadings.of(session)
    frozen = arms_table.frozen_samples(samples)
    session.add(watts(3, 4.0))
    samples.update(session)
    assert frozen.arrays.power_w.tolist() == [2.0, 3.0]
    assert samples.arrays.power_w.tolist() == [2.0, 3.0, 4.0]


async def test_columns_that_do_not_fit_whole_are_left_out_not_cut() -> None:
    """A long arm name with its status beside it: the table leaves out the summary's first
    columns to drop (never the arm, never J/token) rather than cut a figure at the edge; a
    wider terminal brings them back."""
    from anemon.events import MarkerEvent

    long = "minicpm5_1b_ane_pal8_with_a_long_suffix"
    app = Tables()
    async with app.run_test(size=(100, 20)) as pilot:
        session = Session.from_events([
            StartEvent(t=0, wall=0, arm=long), trial(1, long), trial(2, long),
            MarkerEvent(t=3, wall=3, note="abort arm"), StartEvent(t=10, wall=10, arm="b"),
            trial(11, "b"),
        ])  # fmt: skip
        table = app.query_one("#wide", ArmsTable)
        table.show(session)
        await pilot.pause()
        assert arm_cell(table, long) == f"{long} (aborted after 2 trials)"
        keys = [c.key.value for c in table.ordered_columns]
        assert keys[0] == "arm" and keys[-1] == "J/token"
        assert "serious at" not in keys and len(keys) < len(table.picked)
        assert table.virtual_size.width <= table.scrollable_content_region.width
        await pilot.resize_terminal(200, 20)
        await pilot.pause()
        # all of them but the process figures, which no arm has (n/a throughout)
        assert [c.key.value for c in table.ordered_columns] == list(table.picked[:-1])
        assert table.picked[-1] == "mem peak"
        assert column(table, long, "trials") == "2" and j_per_token(table, "b") == "no power"


async def test_the_memory_peak_column_comes_with_the_first_process_reading() -> None:
    app = Tables()
    async with app.run_test(size=(140, 20)) as pilot:
        session = Session.from_events([StartEvent(t=0, wall=0, arm="a"), trial(1, "a"),
                                       trial(2, "a")])  # fmt: skip
        brief = app.query_one("#brief", ArmsTable)
        brief.show(session)
        await pilot.pause()
        assert "mem peak" not in [c.key.value for c in brief.ordered_columns]
        session.add(TelemetryEvent(t=1.5, wall=1.5, arm="a", pid=7, mem_gb=1.93))
        brief.show(session)
        await pilot.pause()
        assert [c.key.value for c in brief.ordered_columns][-1] == "mem peak"
        assert column(brief, "a", "mem peak") == "1.93 GB"


async def test_the_headers_say_the_units_of_their_figures() -> None:
    """Issue 24, item 8: "tok/s and W in the headers", in the wide table and the brief one
    (each long header on two lines, the unit on the second)."""
    app = Tables()
    async with app.run_test(size=(120, 20)) as pilot:
        session = Session.from_events(EVENTS)
        wide, brief = app.query_one("#wide", ArmsTable), app.query_one("#brief", ArmsTable)
        for table in (wide, brief):
            table.show(session)
        await pilot.pause()
        labels = {t.id: [c.label.plain for c in t.ordered_columns] for t in (wide, brief)}
        assert {"decode\ntok/s", "J/token"} <= set(labels["wide"])
        assert {"decode\ntok/s", "J/token"} <= set(labels["brief"])
        assert all("mean" not in label for label in labels["wide"] + labels["brief"])


def rendered_rows(table: ArmsTable) -> list[str]:
    """Record the rows the table renders from now on (by arm), the caches' misses: Textual
    renders a row's lines in `_render_line_in_row` when no cache holds them."""
    rows: list[str] = []
    render = table._render_line_in_row

    def counted(row_key, *args, **kwargs):  # type: ignore[no-untyped-def]
        rows.append(row_key.value)
        return render(row_key, *args, **kwargs)

    table._render_line_in_row = counted  # type: ignore[method-assign]
    return rows


async def test_a_trial_that_keeps_the_widths_redraws_its_arms_row_alone() -> None:
    """Issue 26, item 2: a put re-rendered the whole table (Textual's `update_cell` makes
    every cached row stale); a trial that changes one arm's cells, not the columns' widths,
    renders that arm's row again and no other, and shows its new figures."""
    app = Tables()
    async with app.run_test(size=(120, 20)) as pilot:
        session = Session.from_events([StartEvent(t=0, wall=0, arm="a"), trial(1, "a"),
                                       StartEvent(t=10, wall=10, arm="b"), trial(11, "b"),
                                       trial(12, "b")])  # fmt: skip
        table = app.query_one("#wide", ArmsTable)
        table.show(session)
        await pilot.pause()
        widths = [column.content_width for column in table.ordered_columns]
        rows = rendered_rows(table)
        session.add(trial(13, "b"))
        table.show(session)
        await pilot.pause()
        assert set(rows) == {"b"}
        assert [cell.plain for cell in table.get_row("b")][:2] == ["b", "3"]
        assert [column.content_width for column in table.ordered_columns] == widths


async def test_a_cell_wider_than_its_column_widens_it() -> None:
    """A trial count growing a digit widens its column: each column as wide as its widest
    cell or header line (as Textual's `update_width` makes it)."""
    app = Tables()
    async with app.run_test(size=(120, 20)) as pilot:
        session = Session.from_events([StartEvent(t=0, wall=0, arm="a"), trial(1, "a")])
        table = app.query_one("#wide", ArmsTable)
        table.show(session)
        await pilot.pause()
        for t in range(2, 11):
            session.add(trial(t, "a"))
            table.show(session)
            await pilot.pause()
        cells = [cell.plain for cell in table.get_row("a")]
        assert cells[1] == "10"
        assert [c.content_width for c in table.ordered_columns] == [
            max(len(cell), *map(len, column.label.plain.split("\n")))
            for cell, column in zip(cells, table.ordered_columns, strict=True)
        ]


async def test_a_new_sessions_columns_are_as_wide_as_its_own_cells() -> None:
    """A column kept its width through the table's clear for a new session (a seek back, a
    restart): its cells put since, each no wider, left it as wide as the old session's."""
    app = Tables()
    async with app.run_test(size=(120, 20)) as pilot:
        table = app.query_one("#wide", ArmsTable)
        table.show(Session.from_events([StartEvent(t=0, wall=0, arm="a-long-arm-name"),
                                        trial(1, "a-long-arm-name")]))  # fmt: skip
        await pilot.pause()
        table.show(Session.from_events([StartEvent(t=0, wall=0, arm="b"), trial(1, "b")]))
        await pilot.pause()
        assert table.ordered_columns[0].content_width == len("arm")
