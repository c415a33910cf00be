"""Reliability figures: mutated protocol lines through every reader, and damaged recordings.

Run: .venv/bin/python bench/fuzz.py [--lines 1000000] [--seed N]
Prints the cases tried, the failures (an exception, or a command ending other than with 0 or a
one-line refusal) and the trials lost (a TRIAL line read as an event that the session's arms do
not hold). The CI version of the same is tests/fuzz/ (100,000 lines).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.fuzz.mutations

from anemon.cli import main
from anemon.events import TrialEvent
from anemon.recording.reader import open_source
from anemon.recording.writer import Recorder, make_header
from anemon.store import Session
from tests.fuzz.mutations import encode, hostile_json_line, hostile_log

SAMPLE = Path(__file__).resolve().parents[1] / "recordings" / "sim-ab-2b.jsonl"


def run_command(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


def failed(status: int, err: str) -> bool:
    return status not in (0, 2) or "internal error" in err or "Traceback" in err


def lines_figures(lines: int, seed: int, folder: Path) -> None:
    start = time.perf_counter()
    text = hostile_log(seed, lines)
    log = folder / "hostile.log"
    log.write_bytes(encode(text, random.Random(seed)))
    events = list(open_source(log))
    session = Session.from_events(events)
    read_trials = sum(1 for e in events if isinstance(e, TrialEvent) and e.arm is not None)
    held = sum(len(arm) for arm in session.arms.values())
    commands = [["summary", str(log), "--format", f] for f in ("table", "md", "csv", "json")]
    commands += [
        ["export", str(log), "--format", f, "-o", str(folder / f"x.{f}")]
        for f in ("csv", "json", "md", "parquet")
    ]
    recording = folder / "hostile.jsonl"
    with Recorder(recording, make_header("fuzz")) as recorder:
        for event in events:
            recorder.write(event)
    commands.append(["replay", str(recording), "--headless", "--speed", "max"])
    failures = sum(failed(*_status_err(run_command(argv))) for argv in commands)
    print(f"protocol lines: {lines:,} (seed {seed}, half mutated), {len(commands)} commands")
    print(f"  lines read as events: {len(events):,} of {lines:,}")
    print(f"  failures: {failures + (len(events) != lines)}")
    print(f"  trials lost: {read_trials - held} of {read_trials:,}")
    print(f"  time: {time.perf_counter() - start:.1f} s")


def _status_err(result: tuple[int, str, str]) -> tuple[int, str]:
    return result[0], result[2]


def recording_figures(variants: int, seed: int, folder: Path) -> None:
    start = time.perf_counter()
    rng = random.Random(seed)
    data = SAMPLE.read_bytes()
    header, *lines = SAMPLE.read_text().splitlines()
    path = folder / "damaged.jsonl"
    cases = failures = 0
    cut_from = data.rindex(b"\n", 0, len(data) - 1) - 2000
    for end in range(cut_from, len(data) + 1):  # truncated at every byte of the last lines
        path.write_bytes(data[:end])
        cases += 1
        failures += failed(*_status_err(run_command(["summary", str(path), "--format", "json"])))
    for _ in range(variants):  # bytes flipped
        damaged = bytearray(data)
        for _ in range(rng.randint(1, 20)):
            damaged[rng.randrange(len(damaged))] ^= 1 << rng.randrange(8)
        path.write_bytes(bytes(damaged))
        cases += 1
        failures += failed(*_status_err(run_command(["summary", str(path), "--format", "json"])))
    for _ in range(variants):  # field types swapped, non-finite numbers
        damaged_lines = [hostile_json_line(x, rng) if rng.random() < 0.2 else x for x in lines]
        path.write_text("\n".join([header, *damaged_lines]) + "\n")
        cases += 1
        status, out, err = run_command(["summary", str(path), "--format", "json"])
        failures += failed(status, err) or (status == 0 and not json.loads(out))
    print(f"recordings: {cases:,} damaged variants of {SAMPLE.name}")
    print(f"  failures: {failures}")
    print(f"  time: {time.perf_counter() - start:.1f} s")


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--variants", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        lines_figures(args.lines, args.seed, Path(folder))
        recording_figures(args.variants, args.seed, Path(folder))


if __name__ == "__main__":
    main_()
