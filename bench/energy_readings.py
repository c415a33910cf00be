"""The live arms table's energy figures once a second: as cheap at hour 12 as at minute 1?
(not a timed test)

A session of a trial every 4.5 s, a power and process reading every 1 s and a new arm every
hour, read by one `EnergyReadings` as the arms table reads it: each second one more reading,
then the arrays and the running arm's energy and process figures over its kept spans
(`with_energy`'s work). The running arm is a minute old in both: after 1 minute and after
12 hours of readings. It prints the CPU time (`time.process_time`: the machine may be loaded)
of one such second, the median of `--seconds` seconds, for each of `--runs` interleaved runs.

Run: .venv/bin/python bench/energy_readings.py [--runs N] [--seconds N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from anemon.analysis.summary import EnergyReadings, Spans, energy_figures, process_figures
from anemon.events import Event, TelemetryEvent, TrialEvent
from anemon.store import Session

TRIAL_S = 4.5
ARM_S = 3600


def reading(t: float) -> TelemetryEvent:
    return TelemetryEvent(t=t, wall=t, power_w=3 + t % 11 / 10, battery=90 - t / 3600,
                          cpu_pct=95 + t % 7, mem_gb=1.5, gpu_pct=10.0)  # fmt: skip


def arm(second: float) -> str:
    return f"arm{int(second // ARM_S)}"


def session(seconds: int) -> Session:
    events: list[Event] = []
    for second in range(1, seconds + 1):
        events.append(reading(float(second)))
        if second % TRIAL_S < 1:
            at = second - 0.5  # read after the host reading at `second`, as in a live feed
            events.append(TrialEvent(t=at, wall=at, arm=arm(second), trial=second,
                                     decode_tps=50.0, gen=100, battery=80.0))  # fmt: skip
    return Session.from_events(events)


def one_second_ms(seconds: int, repeats: int) -> float:
    """The median CPU of a second's work, over `repeats` seconds after `seconds` of them."""
    live = session(seconds)
    readings = EnergyReadings.of(live)
    spans = Spans.of(live.arms[arm(seconds)])  # the table keeps them while no trial comes
    took = []
    for k in range(repeats):
        live.add(reading(seconds + 1.0 + k))
        start = time.process_time()
        readings.update(live)
        energy_figures(spans, readings, 100)
        process_figures(spans, readings)
        took.append(time.process_time() - start)
    return statistics.median(took) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=200, help="seconds measured per run")
    args = parser.parse_args()
    sizes = {"1 minute": 60, "12 hours": 12 * ARM_S + 60}
    figures: dict[str, list[float]] = {name: [] for name in sizes}
    for _ in range(args.runs):  # interleaved: the machine's load falls on both alike
        for name, seconds in sizes.items():
            figures[name].append(one_second_ms(seconds, args.seconds))
    print(f"one second's energy figures, CPU ms (median of {args.seconds} seconds a run), "
          f"{args.runs} runs:")  # fmt: skip
    for name, ms in figures.items():
        runs = ", ".join(f"{m:.3f}" for m in ms)
        print(f"  {name}: median {statistics.median(ms):.3f} (runs {runs})")


if __name__ == "__main__":
    main()
