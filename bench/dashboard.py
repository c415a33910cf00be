"""The dashboard benchmark (not a timed test): prints what the issue's budgets are measured by.

1. One full refresh with 100,000 trials per series in 8 charts, a power reading per trial
   (target: 50 ms), split into the charts and the arms table, against the naive cost of
   handing one chart the full series.
2. A live session at one trial per 4.5 s, idle between trials (target: < 1 % of a core); and
   the same with a host power reading every second (pymobiledevice3's pace).
3. A replay at `max` of 1M events: the longest hold of the event loop (target: 50 ms), and
   what the arms table's thread does beside the loop meanwhile: one summary of the biggest
   arm (the loop waits for the GIL while it runs).

The real program in a real terminal (its CPU from its own ticks, keys from `tmux send-keys` to
the screen) is bench/terminal.py's; this pilot, fed in-process, is for profiling.

Each figure is printed with its target and the ratio (figure / target: ≤ 1 is met).

Run: .venv/bin/python bench/dashboard.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from anemon.analysis.summary import EnergyReadings, summarize_arm
from anemon.events import Event, StartEvent, TelemetryEvent, TrialEvent
from anemon.feeds.live import LiveFeed
from anemon.feeds.replay import ReplayFeed
from anemon.feeds.runs import Runs
from anemon.pipeline import Pipeline
from anemon.store import ArmSeries, Session
from anemon.ui.app import Dashboard
from anemon.ui.charts.chart import Chart
from anemon.ui.layouts import resolve
from anemon.ui.pane import is_shown as shown

ARMS = ("minicpm5_1b_ane_pal8", "minicpm5_1b_gpu_int8")
ALL_CHARTS = "#pair { display: block; height: 1fr; }\n#log { height: 5; }\n"
"""A user layout showing every chart: the six session charts and the two arm charts."""


def figure(what: str, value: float, target: float, unit: str = "ms") -> None:
    """One line: the figure, its target and the ratio, and whether it is met."""
    verdict = "met" if value <= target else "MISSED"
    print(
        f"  {what}: {value:.2f} {unit} "
        f"(target {target:g} {unit}, ratio {value / target:.2f}: {verdict})"
    )


def trial(t: float, arm: str, i: int) -> TrialEvent:
    return TrialEvent(
        t=t,
        wall=t,
        arm=arm,
        trial=i,
        app_t=t,
        decode_tps=50 + 20 * math.exp(-i / 5000) + (i % 7),
        prompt_tps=2000 + (i % 13) * 10,
        gen=256,
        battery=95 - i / 10_000,
        thermal=min(3, i // 30_000),
        free_gb=38 - i / 100_000,
        line=f"TRIAL arm={arm} trial={i}",
    )


def power(t: float, i: int) -> TelemetryEvent:
    return TelemetryEvent(t=t, wall=t, power_w=3 + (i % 11) / 10, charging=False, plugged=False)


def events(per_arm: int, with_power: bool = False) -> list[Event]:
    """Two arms' trials; `with_power`: a host power reading just before each trial."""
    out: list[Event] = []
    for k, arm in enumerate(ARMS):
        base = k * per_arm * 4.5
        out.append(StartEvent(t=base, wall=base, arm=arm, line=f"START arm={arm}"))
        for i in range(per_arm):
            t = base + 1 + i * 4.5
            if with_power:
                out.append(power(t - 0.5, i))
            out.append(trial(t, arm, i))
    return out


def live_feed(session: Session) -> LiveFeed:
    """A live session for the benchmarks: the product's LiveFeed, events emitted by `trickle`."""
    return LiveFeed("bench (live)", Pipeline(session=session))


async def trickle(feed: LiveFeed, period: float) -> None:
    """A trial of the second arm every `period` seconds, as a live session at that pace."""
    session = feed.session
    i = len(session.arms[ARMS[1]])
    while True:
        await asyncio.sleep(period)
        feed.pipeline.emit(trial(session.last_t + period, ARMS[1], i))
        i += 1


async def readings(feed: LiveFeed, period: float) -> None:
    """A host power reading every `period` seconds."""
    i = 0
    while True:
        await asyncio.sleep(period)
        feed.pipeline.emit(power(feed.session.last_t + period, i))
        i += 1


async def full_refresh(per_arm: int, layout: Path) -> None:
    session = Session.from_events(events(per_arm, with_power=True))
    # the redraw timer out of the way: the benchmark drives the redraws
    app = Dashboard(Runs.one(live_feed(session)), layout, redraw_s=3600)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        charts = [c for c in app.pane.panels.charts if shown(c)]
        full, ticks, tables, renders, rows = [], [], [], [], []
        for i in range(20):
            session.add(trial(session.last_t + 4.5, ARMS[i % 2], per_arm + i))
            if i < 10:  # a full refresh: every chart, even those whose lines did not change
                for chart in charts:
                    chart.drawn = None
            start = time.perf_counter()
            app.redraw(force=i < 10)  # 10 full refreshes, then 10 timer rounds (budgeted)
            drawn = time.perf_counter()
            for chart in charts:
                chart.render()  # the PlotWidget draws its canvas here
            (full if i < 10 else ticks).append(time.perf_counter() - start)
            if i < 10:
                renders.append(time.perf_counter() - drawn)
                await app.workers.wait_for_complete()  # the table's summary, in a thread
                await pilot.pause()  # its row put
                rows.append(time.perf_counter() - start)
                table = time.perf_counter()
                for (
                    arms
                ) in app.pane.panels.tables:  # the arms table again, alone: its share of a refresh
                    arms.shown.clear()  # every arm summarized again (the readings kept)
                    arms.clear()
                    arms.show(session)
                tables.append((time.perf_counter() - table) / 2)  # both arms, one changed
            await pilot.pause()
        print(
            f"{per_arm:,} trials per arm, {len(charts)} charts + table + log + status: "
            f"full refresh median {statistics.median(full) * 1000:.0f} ms "
            f"(max {max(full) * 1000:.0f}); one timer round (charts within the round's budget, "
            f"the table at most once a second) median {statistics.median(ticks) * 1000:.0f} ms "
            f"(max {max(ticks) * 1000:.0f})"
        )
        figure("full refresh on the event loop, median", statistics.median(full) * 1000, 50)
        print(
            f"    of which the charts' canvases {statistics.median(renders) * 1000:.0f} ms; the "
            f"arms table's summary of the changed arm (~{statistics.median(tables) * 1000:.0f} "
            f"ms when run alone) is in a thread: the row is put "
            f"{statistics.median(rows) * 1000:.0f} ms after the refresh began (median)"
        )
        chart = app.query_one("#decode", Chart)
        arm = session.arms[ARMS[0]]
        x = np.frombuffer(arm.columns["t"])
        y = np.frombuffer(arm.columns["decode_tps"])
        start = time.perf_counter()
        chart.clear()
        chart.plot(x, y)
        chart.render()
        naive = time.perf_counter() - start
        print(f"naive: one chart handed {len(x):,} points takes {naive * 1000:.0f} ms")


async def idle_live(seconds: float, power_every: float | None = None) -> None:
    feed = live_feed(Session.from_events(events(500, with_power=power_every is not None)))
    app = Dashboard(Runs.one(feed), resolve("default"))
    async with app.run_test(size=(120, 40)) as pilot:
        runners = [asyncio.create_task(trickle(feed, period=4.5))]
        if power_every is not None:
            runners.append(asyncio.create_task(readings(feed, power_every)))
        await pilot.pause(1.0)
        cpu, wall = time.process_time(), time.perf_counter()
        await asyncio.sleep(seconds)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        for runner in runners:
            runner.cancel()
    pace = "" if power_every is None else f" and a power reading every {power_every:g} s"
    print(
        f"live, one trial per 4.5 s{pace}, over {wall:.1f} s: {cpu / wall * 100:.2f} % of a "
        f"core (includes the headless compositor)"
    )
    figure("live, share of a core", cpu / wall * 100, 1, "%")


class Collections:
    """How long each garbage collection took, by generation (`gc.callbacks`), while entered."""

    def __init__(self) -> None:
        self.took: dict[int, list[float]] = {0: [], 1: [], 2: []}
        self._start = 0.0

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
        else:
            self.took[info["generation"]].append(time.perf_counter() - self._start)

    def __enter__(self) -> Collections:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._callback)

    def report(self) -> str:
        parts = []
        for generation, took in self.took.items():
            longest = f", longest {max(took) * 1000:.0f} ms" if took else ""
            parts.append(f"generation {generation}: {len(took)}{longest}")
        return "garbage collections: " + "; ".join(parts)


Span = tuple[float, float]
"""When something began and ended (`time.perf_counter`)."""


PROBE_S = 0.005
"""The probe's sleep."""


async def lateness(into: list[float], spans: list[Span], period_s: float = PROBE_S) -> None:
    """How late each short sleep wakes: what held the event loop meanwhile, whatever it was
    (`spans`: each sleep's own, to tell what ran in the longest)."""
    while True:
        start = time.perf_counter()
        await asyncio.sleep(period_s)
        end = time.perf_counter()
        into.append(max(0.0, end - start - period_s))
        spans.append((start, end))


def timed(app: Dashboard, name: str, into: list[float], spans: list[Span]) -> None:
    """Wrap one of the app's timer callbacks to record how long it holds the event loop."""
    call = getattr(app, name)

    def wrapper(*args: object, **kwargs: object) -> None:
        start = time.perf_counter()
        call(*args, **kwargs)
        end = time.perf_counter()
        into.append(end - start)
        spans.append((start, end))

    setattr(app, name, wrapper)


def within(span: Span, spans: list[Span]) -> float:
    """How long `spans` ran within `span`, in seconds."""
    return sum(max(0.0, min(end, span[1]) - max(start, span[0])) for start, end in spans)


def longest_hold(holds: list[float], sleeps: list[Span], ours: dict[str, list[Span]]) -> str:
    """When the probe's longest hold came and what ran in it: our callbacks, and the rest
    (Textual's layout and painting, a collection, another thread or process)."""
    worst = max(range(len(holds)), key=holds.__getitem__)
    span = sleeps[worst]
    parts = {name: within(span, spans) for name, spans in ours.items()}
    rest = span[1] - span[0] - PROBE_S - sum(parts.values())
    said = ", ".join(f"our {name} {took * 1000:.0f} ms" for name, took in parts.items())
    return (f"the probe's longest hold came {span[0] - sleeps[0][0]:.2f} s after it began: "
            f"{said}, the rest {rest * 1000:.0f} ms")  # fmt: skip


def summary_ms(arm: ArmSeries) -> float:
    """What the arms table's worker thread runs for an arm, best of 3, in ms."""
    readings = EnergyReadings()  # no power readings: the bench replays none
    took = []
    for _ in range(3):
        start = time.perf_counter()
        summarize_arm(arm, readings)
        took.append(time.perf_counter() - start)
    return min(took) * 1000


async def replay_max(count: int) -> None:
    made = time.perf_counter()
    recorded = events(count // 2)
    feed = ReplayFeed(recorded, "bench (replay)", speed=math.inf)
    replayer = feed.replay
    print(f"built {len(recorded):,} events in {time.perf_counter() - made:.1f} s")
    app = Dashboard(Runs.one(feed), resolve("default"))
    ticks: list[float] = []
    redraws: list[float] = []
    ours: dict[str, list[Span]] = {"tick": [], "redraw": []}
    timed(app, "tick", ticks, ours["tick"])
    timed(app, "redraw", redraws, ours["redraw"])
    presses = []
    holds: list[float] = []
    sleeps: list[Span] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        watching = asyncio.create_task(lateness(holds, sleeps))
        with Collections() as collections:  # from start-up to the replay's end, not the exit
            started = time.perf_counter()
            while not replayer.finished and time.perf_counter() - started < 600:
                start = time.perf_counter()
                await pilot.press("plus")  # answered between two timer callbacks
                presses.append(time.perf_counter() - start)
                await pilot.pause(0.2)
            took = time.perf_counter() - started
        watching.cancel()
    redraws = redraws[1:]  # the first is the forced full draw at start-up, before any key
    block = max(max(ticks), max(redraws))
    print(
        f"replay at max of {len(recorded):,} events ({took:.1f} s): longest tick "
        f"{max(ticks) * 1000:.0f} ms, longest redraw after start-up {max(redraws) * 1000:.0f} ms "
        f"(p99 {statistics.quantiles(redraws, n=100)[-1] * 1000:.0f}): a key waits "
        f"at most ~{block * 1000:.0f} ms; pilot.press round trip median "
        f"{statistics.median(presses) * 1000:.0f} ms (the pilot's own settling waits: not the "
        f"key's latency, see the tmux figure)"
    )
    print(
        f"  while replaying, {collections.report()}; a 5 ms sleep's longest lateness "
        f"{max(holds) * 1000:.0f} ms (p99 {statistics.quantiles(holds, n=100)[-1] * 1000:.0f}): "
        f"an upper bound of any hold (Textual's compositing, a collection, and the OS giving "
        f"the core to another process)"
    )
    print(f"  {longest_hold(holds, sleeps, ours)}")
    biggest = max(feed.session.arms.values(), key=len)
    print(f"  one summary of its biggest arm ({len(biggest):,} trials), best of 3: "
          f"{summary_ms(biggest):.1f} ms")  # fmt: skip
    figure("replay at max, longest hold by our callbacks", block * 1000, 50)
    figure("replay at max, longest hold of the event loop (the probe)", max(holds) * 1000, 50)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, shorter idle")
    parser.add_argument(
        "--only", choices=("refresh", "live", "replay"), action="append",
        help="run only these parts (repeatable)",
    )  # fmt: skip
    args = parser.parse_args()
    parts = set(args.only or ("refresh", "live", "replay"))
    if "refresh" in parts:
        with tempfile.TemporaryDirectory() as tmp:
            layout = Path(tmp) / "all-charts.tcss"
            layout.write_text(resolve("default").read_text() + ALL_CHARTS)
            asyncio.run(full_refresh(10_000 if args.quick else 100_000, layout))
    if "live" in parts:
        asyncio.run(idle_live(9.0 if args.quick else 45.0))
        asyncio.run(idle_live(9.0 if args.quick else 45.0, power_every=1.0))
    if "replay" in parts:
        asyncio.run(replay_max(100_000 if args.quick else 1_000_000))


if __name__ == "__main__":
    main()
