"""Backbone benchmark: start-up, summary vs a bare read+split loop, tail latency, re-pull cost,
replay rate.

Run: .venv/bin/python bench/backbone.py [--trials 1000000] [--events 1000000]
Prints each figure with its target and the ratio to it; nothing here is a pass/fail test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TRIAL = (
    "TRIAL arm={arm} trial={i} warmup=0 t={t:.1f} prompt_tokens=128 prompt_tps={p:.1f} "
    "decode_tps={d:.1f} gen=256 battery=95 battery_state=charging thermal={th} free_gb=38.1\n"
)
THERMAL = ("nominal", "fair", "serious", "critical")


def verdict(measured: float, target: float) -> str:
    """`(target 4x: met)`: how a figure stands against its target (lower is better)."""
    return (
        f"met, {measured / target:.2f} of the target"
        if measured <= target
        else (f"MISSED by {measured / target:.2f}x")
    )


def startup(runs: int = 5) -> tuple[float, float, float]:
    """Median seconds of `python -c pass`, `anemon --help` and `anemon summary` of the spec's
    small example log, each in a fresh process of this venv."""
    small = Path(__file__).parents[1] / "tests" / "data" / "spec_example.log"
    commands = (
        [sys.executable, "-c", "pass"],
        [sys.executable, "-m", "anemon", "--help"],
        [sys.executable, "-m", "anemon", "summary", str(small)],
    )
    medians = []
    for command in commands:
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times.append(time.perf_counter() - start)
        medians.append(statistics.median(times))
    bare, helped, summary = medians
    return bare, helped, summary


def write_log(path: Path, trials: int) -> None:
    with path.open("w") as f:
        for arm in ("minicpm5_1b_ane_pal8", "minicpm5_1b_gpu_int8"):
            f.write(f"START arm={arm} model=M compute=ane bits=8 free_gb=38.2 mode=sustain\n")
            for i in range(trials // 2):
                d = 75.8 - (i % 600) * 0.04
                f.write(
                    TRIAL.format(arm=arm, i=i, t=i * 4.5, p=3900 - i % 1000, d=d, th=THERMAL[i % 3])
                )
            f.write(f"END arm={arm} reason=done trials={trials // 2}\n")


def bare_loop(path: Path) -> float:
    start = time.perf_counter()
    words = 0
    with path.open(encoding="utf-8", errors="replace") as f:
        for line in f:
            words += len(line.split())
    return time.perf_counter() - start


def scanner() -> str:
    """How the columnar path splits blocks here: the compiled scanner, or the regex fallback
    (an install without a C compiler)."""
    from anemon.parsing import columnar

    return "compiled" if columnar._scan is not None else "regex (not compiled)"


def timed_summary(path: Path) -> tuple[float, float]:
    """Seconds and peak RSS (MiB) of `anemon summary --format json`, in a fresh process."""
    code = (
        "import resource, sys, time; from anemon.cli import main; t = time.perf_counter(); "
        "sys.stdout = open('/dev/null', 'w'); main(['summary', '--format', 'json', sys.argv[1]]); "
        "sys.stderr.write(f'{time.perf_counter() - t} "
        "{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}')"
    )
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True)
    seconds, peak = out.stderr.split()[-2:]
    return float(seconds), float(peak)


async def tail_latency(directory: Path, lines: int = 60) -> list[float]:
    """Milliseconds from a line's write to its arrival out of MirrorTailer.follow."""
    from anemon.sources.mirror import MirrorTailer

    path = directory / "mirror.log"
    path.write_text("")
    tailer = MirrorTailer(path, poll_s=1.0)
    stop = asyncio.Event()
    written: dict[str, float] = {}
    latencies: list[float] = []

    async def write() -> None:
        for i in range(lines):
            await asyncio.sleep(0.05)
            text = TRIAL.format(arm="a", i=i, t=i, p=1.0, d=1.0, th="fair").strip()
            written[text] = time.perf_counter()
            with path.open("a") as f:
                f.write(text + "\n")
        await asyncio.sleep(0.3)
        stop.set()

    writer = asyncio.create_task(write())
    async for batch in tailer.follow(stop):
        now = time.perf_counter()
        latencies += [(now - written[x]) * 1000 for x in batch if isinstance(x, str)]
    await writer
    return latencies


def repull_cost(directory: Path, size_mb: int = 50) -> float:
    """Milliseconds of tailer + parser work when a 50 MB mirror is re-pulled with 1 KB new."""
    from anemon.pipeline import LineFeed, Pipeline
    from anemon.sources.mirror import MirrorTailer

    path = directory / "big.log"
    line = TRIAL.format(arm="a", i=1, t=1, p=1.0, d=1.0, th="fair")
    path.write_text(line * (size_mb * 1024 * 1024 // len(line)))
    tailer = MirrorTailer(path)
    feed = LineFeed(Pipeline(), "bench")
    for item in tailer.check():  # catch up once (not timed)
        feed.feed((item,))
    costs = []
    for _ in range(20):
        tmp = directory / "big.tmp"
        data = path.read_bytes() + (line * (1024 // len(line) + 1)).encode()
        tmp.write_bytes(data)
        os.replace(tmp, path)  # a devicectl-style re-pull: the whole file replaced
        start = time.perf_counter()
        feed.feed([x for x in tailer.check() if isinstance(x, str)])
        costs.append((time.perf_counter() - start) * 1000)
    return statistics.median(costs)


def replay_rate(directory: Path, events: int) -> tuple[float, float]:
    """Seconds to load a recording of `events` events, and events/s played at max speed."""
    from anemon.recording.reader import open_source
    from anemon.sources.replay import Replayer

    path = directory / "rec.jsonl"
    with path.open("w") as f:
        f.write(json.dumps({"format": "anemon-recording", "version": 1}) + "\n")
        for i in range(events):
            f.write(
                json.dumps({"kind": "trial", "t": i * 0.1, "wall": 0, "arm": f"arm{i % 2}",
                            "trial": i, "decode_tps": 50.0 + i % 9, "prompt_tps": 1000.0,
                            "gen": 256, "thermal": THERMAL[i % 3]}) + "\n"
            )  # fmt: skip
    start = time.perf_counter()
    loaded = list(open_source(path))
    load_s = time.perf_counter() - start
    replayer = Replayer(loaded, speed=float("inf"))
    start = time.perf_counter()
    while not replayer.finished:
        replayer.tick()
    return load_s, events / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=1_000_000)
    parser.add_argument("--events", type=int, default=1_000_000)
    args = parser.parse_args()
    bare_start, helped, small = startup()
    for what, seconds in (("anemon --help", helped), ("anemon summary of a small log", small)):
        ratio = seconds / bare_start
        print(f"{what}: {seconds * 1000:.0f} ms; bare `python -c pass` {bare_start * 1000:.0f} ms; "
              f"ratio {ratio:.1f}x (target 6x: {verdict(ratio, 6)})")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        log = directory / "bench.log"
        write_log(log, args.trials)
        size = log.stat().st_size / 1e6
        bare = min(bare_loop(log) for _ in range(3))
        runs = [timed_summary(log) for _ in range(3)]
        summary = statistics.median(seconds for seconds, _ in runs)
        peak = max(peak for _, peak in runs)
        print(f"summary of {args.trials:,} trials ({size:.0f} MB, {scanner()} scanner): "
              f"{summary:.2f} s (median of 3); bare read+split loop: {bare:.2f} s (best of 3); "
              f"ratio {summary / bare:.1f}x (target 4x: {verdict(summary / bare, 4)}; goal 2x); "
              f"peak RSS {peak:.0f} MiB (target 300: {verdict(peak, 300)})")  # fmt: skip
        latencies = asyncio.run(tail_latency(directory))
        p95 = statistics.quantiles(latencies, n=20)[-1]
        print(f"tail: append -> line, median {statistics.median(latencies):.0f} ms, "
              f"p95 {p95:.0f} ms (target 150: {verdict(p95, 150)}), "
              f"max {max(latencies):.0f} ms, {len(latencies)} lines")  # fmt: skip
        repull = repull_cost(directory)
        print(
            f"re-pull of a 50 MB mirror with 1 KB new: {repull:.2f} ms "
            f"(tailer check + parse, median of 20; target 5: {verdict(repull, 5)})"
        )
        load_s, rate = replay_rate(directory, args.events)
        print(
            f"replay at max: {args.events:,} events loaded in {load_s:.1f} s "
            f"(target 4 s: {verdict(load_s, 4)}), played at {rate:,.0f} events/s"
        )
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())  # other work skews every figure
    print(
        f"(python {sys.version.split()[0]}, {os.cpu_count()} cores, load average {load}; "
        f"self peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB)"
    )


if __name__ == "__main__":
    main()
