"""Memory and CPU of the whole-file commands against the size of the file (issue 26 item 5; not
a timed test): prints what a streaming reader is measured by.

1. A recording of SIZE MB (default 100 and 400): the body of recordings/sim-sustain-1b-v2.jsonl
   laid end to end, each copy's arms renamed and its clock moved on (a day of runs in one
   file). For each of `anemon summary --format json`, `anemon compare` (against the sample),
   `anemon replay --headless --speed max`, `anemon export --format csv|json|sqlite|parquet -o
   OUT` (the trials; SQLite: every table) and `--table telemetry` as CSV and JSON: peak RSS
   and CPU time (user + system) of the child process, from its own rusage (wait4). Parquet is
   skipped, and says so, where pyarrow is not installed (`pip install -e '.[parquet]'`).
2. Text lines: a raw log of LINES empty lines around the spec's example (default 2,000,000)
   and a log of as many TRIAL lines, summarized: CPU per line of each (the text's should be no
   dearer than the trials').

Each figure is RUNS runs (default 1; the machine's load shows in the spread).

Run: .venv/bin/python bench/whole_file.py [--sizes 100 400] [--lines 2000000] [--runs 3]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "recordings" / "sim-sustain-1b-v2.jsonl"
SPEC_EXAMPLE = ROOT / "tests" / "data" / "spec_example.log"
_SHIFTED = ("t", "wall", "load_changed_t")
"""An event's clock fields: moved on by each copy's offset."""


def copies(body: list[dict[str, object]], size: int) -> Iterator[bytes]:
    """The body's lines again and again until `size` bytes, each copy later and renamed."""
    span = max(float(e.get("t", 0.0)) for e in body) + 60.0  # type: ignore[arg-type]
    written, copy = 0, 0
    while written < size:
        offset = copy * span
        for event in body:
            moved = dict(event)
            for key in _SHIFTED:
                if isinstance(moved.get(key), int | float):
                    moved[key] = moved[key] + offset  # type: ignore[operator]
            if isinstance(moved.get("arm"), str):
                moved["arm"] = f"{moved['arm']}_{copy}"
            line = orjson.dumps(moved) + b"\n"
            written += len(line)
            yield line
        copy += 1


def write_recording(path: Path, megabytes: int) -> Path:
    """A recording of about `megabytes` MB (see the module's doc)."""
    header, *lines = SAMPLE.read_bytes().splitlines()
    body = [orjson.loads(line) for line in lines]
    body = [e for e in body if e.get("kind") not in ("summary", "preflight")]
    with path.open("wb") as out:
        out.write(header + b"\n")
        out.writelines(copies(body, megabytes * 1_000_000))
    return path


def write_text_log(path: Path, lines: int, text: bool) -> Path:
    """The spec's example, then `lines` empty lines (`text`) or as many TRIAL lines."""
    with path.open("w") as out:
        out.write(SPEC_EXAMPLE.read_text())
        if text:
            out.write("\n" * lines)
        else:
            out.write("START arm=many model=M compute=ane\n")
            out.writelines(f"TRIAL arm=many trial={n} t={n}.0 decode_tps=20.0 gen=256\n"
                           for n in range(lines))  # fmt: skip
    return path


def measured(args: list[str]) -> tuple[float, float]:
    """CPU seconds and peak RSS (MiB) of `anemon ARGS` (its output thrown away)."""
    child = subprocess.Popen([sys.executable, "-m", "anemon", *args],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    _, status, usage = os.wait4(child.pid, 0)
    assert child.stderr is not None
    error = child.stderr.read().decode(errors="replace").strip()
    child.stderr.close()
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"anemon {' '.join(args)} failed: {error}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def spread(values: list[float], digits: int) -> str:
    """ "12.3" for one run, "12.3 (11.9-13.0)" as median and range for several."""
    ordered = sorted(values)
    middle = ordered[len(ordered) // 2]
    if len(ordered) == 1:
        return f"{middle:.{digits}f}"
    return f"{middle:.{digits}f} ({ordered[0]:.{digits}f}-{ordered[-1]:.{digits}f})"


def commands(source: Path, work: Path) -> Iterator[tuple[str, list[str]]]:
    yield "summary --format json", ["summary", str(source), "--format", "json"]
    yield "compare (with the sample)", ["compare", str(source), str(SAMPLE), "--format", "json"]
    yield "replay --headless", ["replay", str(source), "--headless", "--speed", "max"]
    formats = ["csv", "json", "sqlite"]
    if importlib.util.find_spec("pyarrow") is not None:
        formats.append("parquet")
    for form in formats:
        out = work / f"out.{form}"
        yield f"export --format {form}", ["export", str(source), "--format", form, "-o", str(out)]
    for form in ("csv", "json"):  # the host's readings: ~15 of them to a trial
        out = work / f"telemetry.{form}"
        args = ["export", str(source), "--table", "telemetry", "--format", form, "-o", str(out)]
        yield f"export --table telemetry {form}", args


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 400], metavar="MB")
    parser.add_argument("--lines", type=int, default=2_000_000)
    parser.add_argument("--runs", type=int, default=1)
    options = parser.parse_args()
    if importlib.util.find_spec("pyarrow") is None:
        print("(parquet skipped: pyarrow is not installed)")
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        for megabytes in options.sizes:
            source = write_recording(work / f"r{megabytes}.jsonl", megabytes)
            print(f"a recording of {source.stat().st_size / 1e6:.0f} MB "
                  f"({options.runs} run(s) each: median (range)):")  # fmt: skip
            for name, args in commands(source, work):
                runs = [measured(args) for _ in range(options.runs)]
                cpu = spread([c for c, _ in runs], 1)
                rss = spread([r for _, r in runs], 0)
                print(f"  {name:<28} {cpu:>18} s CPU, peak RSS {rss:>16} MiB", flush=True)
            source.unlink()
        print(f"summary of a raw log with {options.lines:,} lines of each kind:")
        for text in (True, False):
            log = write_text_log(work / "lines.log", options.lines, text)
            runs = [measured(["summary", str(log), "--format", "json"])
                    for _ in range(options.runs)]  # fmt: skip
            per_line = [cpu / options.lines * 1e6 for cpu, _ in runs]
            kind = "empty lines" if text else "TRIAL lines"
            print(
                f"  {kind}: {spread(per_line, 2)} µs CPU a line (the whole command's CPU "
                f"over the lines), peak RSS {spread([r for _, r in runs], 0)} MiB",
                flush=True,
            )


if __name__ == "__main__":
    main()
