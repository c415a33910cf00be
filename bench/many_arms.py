"""Thousands of one-trial arms (issue 21, not a timed test): prints what the fix is measured by.

1. `anemon summary LOG` (the table, 200 columns) and `--format json` of 5,000, 20,000 and
   100,000 arms: wall time, CPU time (user + system: what a busy machine's wall time hides)
   and peak RSS of the process (its own rusage, from wait4).
2. The dashboard on a replay of 5,000 arms at `max` (Textual's pilot, headless): the longest
   hold of the event loop (a 5 ms sleep that wakes late by whatever held it), and from a `q`
   press to the app's end.

The log is tests/many_arms.py's: one START/LOAD/TRIAL/END group per arm.

Each summary figure is RUNS runs (default 1), as median (range): the machine's load shows in
the spread.

Run: .venv/bin/python bench/many_arms.py [--quick] [--runs N]  (--quick: 5,000 and 20,000 arms)
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.many_arms

from anemon.feeds.replay import ReplayFeed
from anemon.feeds.runs import Runs
from anemon.recording.reader import open_source
from anemon.ui.app import Dashboard
from anemon.ui.layouts import resolve
from bench.whole_file import spread
from tests.many_arms import write_many_arms


def summary(log: Path, form: str) -> tuple[float, float, float]:
    """Seconds, CPU seconds and peak RSS (MiB) of `anemon summary LOG --format FORM`."""
    env = {**os.environ, "COLUMNS": "200"}
    began = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "anemon", "summary", str(log), "--format", form],
        stdout=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise SystemExit(f"summary {form} of {log} failed: {child.returncode}")
    cpu = usage.ru_utime + usage.ru_stime
    return time.perf_counter() - began, cpu, usage.ru_maxrss / 1024


async def dashboard(log: Path, work: Path) -> tuple[float, float]:
    """The longest hold of the loop while a replay of `log` plays at max, and `q` to exit."""
    feed = ReplayFeed(list(open_source(log)), str(log), markers_dir=work, speed=math.inf)
    app = Dashboard(Runs.one(feed), resolve("default"), save_dir=work)
    worst = 0.0
    async with app.run_test(size=(120, 40)) as pilot:
        while not feed.finished:
            began = time.perf_counter()
            await asyncio.sleep(0.005)
            worst = max(worst, time.perf_counter() - began - 0.005)
        pressed = time.perf_counter()
        await pilot.press("q")
        await pilot.pause()
    return worst, time.perf_counter() - pressed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--runs", type=int, default=1)
    options = parser.parse_args()
    counts = (5_000, 20_000) if options.quick else (5_000, 20_000, 100_000)
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        logs = {n: write_many_arms(work / f"arms{n}.log", n) for n in counts}
        print("anemon summary LOG (COLUMNS=200):")
        for n, log in logs.items():
            for form in ("table", "json"):
                runs = [summary(log, form) for _ in range(options.runs)]
                seconds, cpu, rss = ([run[k] for run in runs] for k in range(3))
                size = log.stat().st_size / 1e6
                print(f"  {n:>7,} arms ({size:.1f} MB), {form:>5}: {spread(seconds, 1)} s "
                      f"({spread(cpu, 1)} s CPU), peak RSS {spread(rss, 0)} MiB",
                      flush=True)  # fmt: skip
        worst, quit_s = asyncio.run(dashboard(logs[5_000], work))
        print("dashboard, replay of 5,000 arms at max (headless pilot, 120x40):")
        print(f"  longest hold of the event loop: {worst * 1000:.0f} ms")
        print(f"  q to the app's end: {quit_s * 1000:.0f} ms")


if __name__ == "__main__":
    main()
