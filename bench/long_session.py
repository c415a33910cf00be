"""A 12-hour live session: is hour 12 as cheap as minute 1? (not a timed test)

The product's Dashboard (headless pilot, 120x40) on a LiveFeed: a trial every 4.5 s, a host
power reading every 1 s and a reading of the bench app's process every 1 s, arms changing
every hour. The session is run in virtual time: two real-time windows at the session's pace,
one at its start and one after the other ~12 hours were emitted at `max` (the app's timers
running between batches, as at a replay's max speed). For each window it prints the process's
CPU per trial (the window's CPU time over its trials: each trial's redraw plus its share of the
readings and the idle rest), and the RSS (current and peak). Targets: RSS < 300 MB at the end;
per-trial CPU at the end within ±20 % of the start's.

CPU time (`time.process_time`), not wall time: the machine may be loaded. Each run is a fresh
process (`--runs`), so one run's heap does not carry into the next.

Run: .venv/bin/python bench/long_session.py [--quick] [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from anemon.events import Event, StartEvent, TelemetryEvent, TrialEvent
from anemon.feeds.live import LiveFeed
from anemon.feeds.runs import Runs
from anemon.pipeline import Pipeline
from anemon.ui.app import Dashboard
from anemon.ui.layouts import resolve

TRIAL_S = 4.5
READING_S = 1.0
ARM_S = 3600.0
HOURS = 12.0


class Virtual:
    """The session's events second by second from `t`: its trials, power and process readings."""

    def __init__(self) -> None:
        self.t = 0.0
        self.trials = 0
        self.next_trial = TRIAL_S
        self.arm = ""

    def second(self) -> list[Event]:
        """The events of the next second of session time."""
        self.t += READING_S
        t, out = self.t, []
        arm = f"arm_{int(t // ARM_S):02d}_ane_pal8"
        if arm != self.arm:
            self.arm = arm
            out.append(StartEvent(t=t, wall=t, arm=arm, app_t=0.0, line=f"START arm={arm}"))
        out.append(TelemetryEvent(t=t, wall=t, power_w=3 + (self.trials % 11) / 10,
                                  battery=90.0, charging=False, plugged=False))  # fmt: skip
        out.append(TelemetryEvent(t=t, wall=t, arm=arm, pid=4242, cpu_pct=95.0 + t % 7,
                                  mem_gb=1.2 + (t % 13) / 100, gpu_pct=40.0))  # fmt: skip
        while self.next_trial <= t:
            i = self.trials
            out.append(TrialEvent(
                t=self.next_trial, wall=self.next_trial, arm=arm, trial=i,
                app_t=self.next_trial % ARM_S, decode_tps=50 + i % 7, prompt_tps=2000 + i % 13,
                gen=256, battery=90 - i / 1000, thermal=1, free_gb=30.0,
                line=f"TRIAL arm={arm} trial={i}",
            ))  # fmt: skip
            self.trials += 1
            self.next_trial += TRIAL_S
        return out


def rss_mb() -> tuple[float, float]:
    """The process's resident set now and at its peak, in MB (10^6 bytes)."""
    now = 0.0
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                now = int(line.split()[1]) * 1024 / 1e6
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6
    return now, peak


async def at_pace(feed: LiveFeed, virtual: Virtual, seconds: float) -> tuple[float, int]:
    """`seconds` of real time at the session's pace; the CPU time and the trials it took."""
    trials, cpu = virtual.trials, time.process_time()
    for _ in range(int(seconds / READING_S)):
        await asyncio.sleep(READING_S)
        for event in virtual.second():
            feed.pipeline.emit(event)
    return time.process_time() - cpu, virtual.trials - trials


async def fast_forward(feed: LiveFeed, virtual: Virtual, until: float) -> None:
    """Session time up to `until` at max: a minute of events, then the app's turn."""
    while virtual.t < until:
        for _ in range(60):
            for event in virtual.second():
                feed.pipeline.emit(event)
        await asyncio.sleep(0.02)


async def one_run(window_s: float, hours: float) -> None:
    virtual = Virtual()
    feed = LiveFeed("bench (12 h)", Pipeline())
    app = Dashboard(Runs.one(feed), resolve("default"))
    async with app.run_test(size=(120, 40)) as pilot:
        await fast_forward(feed, virtual, 120.0)  # two minutes in: the charts have lines
        await pilot.pause(1.0)
        cpu0, trials0 = await at_pace(feed, virtual, window_s)
        rss0 = rss_mb()
        made = time.process_time()
        await fast_forward(feed, virtual, hours * 3600)
        forwarded = time.process_time() - made
        await pilot.pause(1.0)
        cpu1, trials1 = await at_pace(feed, virtual, window_s)
        rss1 = rss_mb()
    start, end = cpu0 / trials0 * 1000, cpu1 / trials1 * 1000
    print(
        f"RESULT start_ms={start:.2f} end_ms={end:.2f} rss0={rss0[0]:.0f} rss1={rss1[0]:.0f} "
        f"peak={rss1[1]:.0f} trials={len(feed.session.arms)}x{virtual.trials} "
        f"forward_cpu_s={forwarded:.1f}"
    )


def spread(values: list[float]) -> str:
    return f"median {statistics.median(values):.2f} (min {min(values):.2f}, max {max(values):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter windows, one run")
    parser.add_argument("--runs", type=int, help="fresh processes (default 3, quick 1)")
    parser.add_argument("--hours", type=float, default=HOURS, help=argparse.SUPPRESS)
    parser.add_argument("--one", type=float, help=argparse.SUPPRESS)  # a run's window, inside
    args = parser.parse_args()
    if args.one is not None:
        asyncio.run(one_run(args.one, args.hours))
        return
    window = 27.0 if args.quick else 90.0
    runs = args.runs or (1 if args.quick else 3)
    rows: list[dict[str, float]] = []
    for run in range(runs):
        done = subprocess.run(
            [sys.executable, __file__, "--one", str(window), "--hours", str(args.hours)],
            capture_output=True, text=True,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
        )  # fmt: skip
        if done.returncode:  # the run's own error, not only its exit status
            sys.exit(f"run {run + 1} failed (exit status {done.returncode}):\n{done.stderr}")
        line = next(x for x in done.stdout.splitlines() if x.startswith("RESULT"))
        print(f"run {run + 1}: {line.removeprefix('RESULT ')}")
        pairs = (p.split("=") for p in line.split()[1:])
        rows.append({k: float(v) for k, v in pairs if "x" not in v})
    starts, ends = [r["start_ms"] for r in rows], [r["end_ms"] for r in rows]
    ratios = [r["end_ms"] / r["start_ms"] for r in rows]
    print(
        f"{args.hours:g} h session, a trial every {TRIAL_S} s, power and process readings every "
        f"{READING_S:g} s; {runs} run(s), windows of {window:g} s real time:"
    )
    print(f"  CPU per trial at the start, ms: {spread(starts)}")
    print(f"  CPU per trial at the end, ms: {spread(ends)}")
    print(f"  end / start: {spread(ratios)} (target 0.8-1.2)")
    print(f"  RSS at the start, MB: {spread([r['rss0'] for r in rows])}")
    print(f"  RSS at the end, MB: {spread([r['rss1'] for r in rows])} (target < 300)")
    print(f"  peak RSS, MB: {spread([r['peak'] for r in rows])}")


if __name__ == "__main__":
    main()
