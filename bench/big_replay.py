"""A big recording, the user's way (not a timed test): how soon `anemon replay` shows it, and
what a headless replay of it holds in memory.

1. First screen: `anemon replay REC` of a 1M-event recording in a private tmux server's pane at
   120x40, from `tmux new-session` to the first capture showing the replay's first screen with
   its data (the timeline playing, the arms table's first arm), and the process's CPU time by
   then; the same for a 1,000-event recording (the app's own start). Target: within 1 s.
   Skipped without tmux.
2. Headless memory: `anemon replay REC --headless --speed max` of recordings of 250k and 1M
   events (4x the size), peak RSS of the process (`os.wait4`) and its CPU time. Target: the
   bigger needs no more memory than the smaller (within a few MB of the reader's buffers).

The recording is a plan's: a TRIAL every 4.5 s, a power reading every second in between,
an arm changing every 2,000 trials. Every figure with its runs (fresh processes) and spread;
the machine may be loaded: the CPU time and RSS say more than wall time.

Run: .venv/bin/python bench/big_replay.py [--quick] [--runs N] [--code DIR]
(`--code DIR`: run another checkout's anemon, e.g. /work/main, for a before/after)
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from anemon.recording.writer import make_header

FIRST_ARM = "arm_000_ane_pal8"


def write_recording(path: Path, events: int) -> Path:
    """`events` events: a trial every 4.5 s, the host's power reading each second between."""
    t, written, trial = 0.0, 0, 0
    with path.open("wb") as out:
        out.write(orjson.dumps(make_header("bench", device={"kind": "pymobiledevice3"})) + b"\n")
        while written < events:
            if trial % 2000 == 0:
                arm = f"arm_{trial // 2000:03d}_ane_pal8"
                out.write(orjson.dumps({"kind": "start", "t": t, "wall": 1e9 + t, "arm": arm,
                                        "app_t": 0.0}) + b"\n")  # fmt: skip
                written += 1
            for _ in range(4):
                t += 1.0
                out.write(orjson.dumps({"kind": "telemetry", "t": t, "wall": 1e9 + t,
                                        "power_w": 3.0 + trial % 11 / 10, "battery": 90.0,
                                        "charging": False, "plugged": False}) + b"\n")  # fmt: skip
            t += 0.5
            out.write(orjson.dumps({"kind": "trial", "t": t, "wall": 1e9 + t, "arm": arm,
                                    "trial": trial, "app_t": t, "decode_tps": 50.0 + trial % 7,
                                    "prompt_tps": 2000.0, "gen": 256, "battery": 90.0,
                                    "thermal": 1, "free_gb": 30.0}) + b"\n")  # fmt: skip
            written += 5
            trial += 1
    return path


def spread(values: list[float], unit: str) -> str:
    shown = ", ".join(f"{v:.2f}" for v in values)
    return (
        f"median {statistics.median(values):.2f} {unit} (min {min(values):.2f}, "
        f"max {max(values):.2f}; runs: {shown})"
    )


def environment(code: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "TMUX")}
    env["PYTHONPATH"] = str(code)
    return env


_SERVERS = itertools.count()


def first_screen(recording: Path, code: Path, timeout_s: float = 120.0) -> Shown:
    """From starting `anemon replay` in tmux to the first screen showing its data: the seconds,
    and the CPU seconds the process had used by then (`/proc/PID/stat`: less the machine's)."""
    socket = f"anemon-big-{os.getpid()}-{next(_SERVERS)}"  # each its own: one ends slowly
    command = f"exec {sys.executable} -m anemon replay {recording} --layout default"
    start = time.perf_counter()
    subprocess.run(
        ["tmux", "-L", socket, "-f", os.devnull, "new-session", "-d", "-s", "S", "-x", "120",
         "-y", "40", "-c", str(recording.parent), command],
        env=environment(code), check=True, capture_output=True,
    )  # fmt: skip
    tmux = ["tmux", "-L", socket]
    try:
        pid = subprocess.run([*tmux, "display-message", "-p", "-t", "S", "#{pane_pid}"],
                             capture_output=True, text=True).stdout.strip()  # fmt: skip
        while time.perf_counter() - start < timeout_s:
            screen = subprocess.run(
                [*tmux, "capture-pane", "-p", "-t", "S"], capture_output=True, text=True
            ).stdout
            if "playing" in screen and FIRST_ARM in screen:
                return Shown(time.perf_counter() - start, cpu_s(pid))
            time.sleep(0.01)
        raise SystemExit(f"bench: no first screen in {timeout_s:g} s")
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)


@dataclass(frozen=True)
class Shown:
    wall_s: float
    cpu_s: float


def cpu_s(pid: str) -> float:
    """The CPU seconds (user + system) process `pid` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def headless(recording: Path, code: Path) -> tuple[float, float]:
    """A headless replay at max to its end: the process's peak RSS (MB) and CPU seconds."""
    with open(os.devnull, "wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "anemon", "replay", str(recording), "--headless",
             "--speed", "max"],
            stdout=sink, stderr=subprocess.PIPE, env=environment(code),
        )  # fmt: skip
        _, status, usage = os.wait4(process.pid, 0)
    if status != 0:
        raise SystemExit(f"bench: the headless replay failed ({status})")
    return usage.ru_maxrss * 1024 / 1e6, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs, smaller recordings")
    parser.add_argument("--runs", type=int, help="runs of each figure (default 5, quick 2)")
    parser.add_argument("--code", type=Path, default=Path(__file__).resolve().parents[1])
    args = parser.parse_args()
    runs = args.runs or (2 if args.quick else 5)
    big = 400_000 if args.quick else 1_000_000
    with tempfile.TemporaryDirectory() as tmp:
        made = time.perf_counter()
        recording = write_recording(Path(tmp) / "big.jsonl", big)
        size = recording.stat().st_size / 1e6
        print(f"{big:,} events ({size:.0f} MB) written in {time.perf_counter() - made:.1f} s")
        if shutil.which("tmux") is None:
            print("first screen: not measured (no tmux)")
        else:
            small = write_recording(Path(tmp) / "tiny.jsonl", 1_000)
            for path, what in ((small, "1,000 events"), (recording, f"{big:,} events")):
                shown = [first_screen(path, args.code) for _ in range(runs)]
                met = sum(s.wall_s <= 1.0 for s in shown)
                print(f"`anemon replay` of {what} in tmux 120x40, start to the first screen: "
                      f"{spread([s.wall_s for s in shown], 's')} (target 1 s: met in {met} of "
                      f"{runs}); the process's CPU by then "
                      f"{spread([s.cpu_s for s in shown], 's')}")  # fmt: skip
        small = write_recording(Path(tmp) / "small.jsonl", big // 4)
        for path in (small, recording):
            figures = [headless(path, args.code) for _ in range(runs)]
            events = big // 4 if path is small else big
            print(f"`replay --headless --speed max`, {events:,} events "
                  f"({path.stat().st_size / 1e6:.0f} MB): peak RSS "
                  f"{spread([f[0] for f in figures], 'MB')}; CPU "
                  f"{spread([f[1] for f in figures], 's')}")  # fmt: skip


if __name__ == "__main__":
    main()
