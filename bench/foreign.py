"""A foreign format's speed: a Yardstick run of N rolling-window samples against an anemon
recording of N trials, each read whole into its Session (`anemon summary`'s path).

Run: .venv/bin/python bench/foreign.py [--samples 100000] [--runs 5]
Prints the median seconds of each and their ratio (target: the Yardstick file within the
recording's time); nothing here is a pass/fail test.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))

from anemon.analysis.load import load_sessions
from anemon.events import StartEvent, TrialEvent
from anemon.recording.codec import to_record
from anemon.recording.writer import make_header
from tests.recording.test_yardstick import result, window


def yardstick_file(folder: Path, samples: int) -> Path:
    path = folder / "yardstick.jsonl"
    path.write_text(json.dumps(result(rolling=window(seconds=samples))) + "\n")
    return path


def recording(folder: Path, trials: int) -> Path:
    path = folder / "recording.jsonl"
    events = [StartEvent(t=0.0, wall=0.0, arm="a", compute="ane")]
    events += [
        TrialEvent(
            t=5.0 + k, wall=5.0 + k, arm="a", trial=k, decode_tps=30.0 + k % 3, app_t=5.0 + k
        )
        for k in range(trials)
    ]
    lines = [json.dumps(make_header("bench"))] + [json.dumps(to_record(e)) for e in events]
    path.write_text("\n".join(lines) + "\n")
    return path


def median_seconds(path: Path, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        for loaded in load_sessions([path]):
            assert len(loaded.session.arms)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        ours = median_seconds(recording(Path(folder), args.samples), args.runs)
        theirs = median_seconds(yardstick_file(Path(folder), args.samples), args.runs)
    print(f"recording of {args.samples:,} trials: {ours:.3f} s")
    print(f"Yardstick run of {args.samples:,} samples: {theirs:.3f} s "
          f"({theirs / ours:.2f} of the recording's time; target: at most 1)")  # fmt: skip


if __name__ == "__main__":
    main()
