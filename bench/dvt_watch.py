"""What sampling the bench app over DVT costs a live `anemon watch --device pymobiledevice3`
(issue 23's target: at most 0.3 % of a core at `--process-s 1`). Not a timed test.

Each run starts a fresh virtual iPhone (`python -m anemon.devices.virtual`: iOS 16, DVT over
lockdown, the bench app launched on one arm, trials flowing, real time), then the real command,
the dashboard in tmux at 120x40, recording to a temporary file, with `--process-s 1` (sampled)
or `--process-s 0` (not: the watch as it was before). Once the first trial is recorded and a
warm-up has passed (`--warmup`, 5 s: the window is the session's first minute), the watch's
own CPU ticks (utime + stime, /proc/PID/stat) are read over `--seconds` (at least 45). Runs
alternate sampled / not, `--runs` of each, so that a machine whose load drifts weighs on both
alike. Printed: % of one core per run, each condition's mean and spread, the sampled-minus-not
difference of each adjacent pair, and how many app readings the sampled runs recorded (0 would
mean nothing was sampled).

`--headless`: the same with `watch --headless` (the progress lines in tmux, no dashboard),
which tells the sampling's own cost (DVT, the samples' events, the recording) from the
dashboard's redraws of the readings it brings.

`--warmup 300`: the steady state of a longer watch instead, five minutes in, where a second
is a fraction of a dot on the charts' time axis (a reading that moves no dot paints nothing).

`--code DIR`: the watch runs another checkout's anemon (a before/after), against this
checkout's virtual iPhone (the same phone for both).

Run: .venv/bin/python bench/dvt_watch.py [--runs 3] [--seconds 45] [--warmup S] [--headless]
     [--code DIR]
(tmux; Linux)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tmux import cpu_s  # the process's own ticks, as bench/terminal.py reads them

BUNDLE = "com.example.bench"
LOG = "Documents/sustain/bench.log"
SIZE = ("120", "40")
WARMUP_S = 5.0
START_TIMEOUT_S = 60.0
APP_SOURCE = "pymobiledevice3:app"


@dataclass(frozen=True, slots=True)
class Run:
    sampled: bool
    core_pct: float
    """The watch's CPU over the window, % of one core."""
    readings: int
    """The app's telemetry events recorded (the sampled runs' must be > 0)."""


def phone(work: Path) -> tuple[subprocess.Popen[str], dict[str, str]]:
    """A virtual iPhone, and the environment that reaches it."""
    proc = subprocess.Popen([sys.executable, "-m", "anemon.devices.virtual"], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()  # export USBMUXD_SOCKET_ADDRESS=...
    if not line.startswith("export USBMUXD_SOCKET_ADDRESS="):
        proc.kill()
        raise SystemExit(f"the virtual iPhone did not start: {line!r}")
    address = line.split("=", 1)[1]
    return proc, {**os.environ, "USBMUXD_SOCKET_ADDRESS": address, "HOME": str(work),
                  "TERM": "xterm-256color"}  # fmt: skip


def recorded(path: Path, kind: str, source: str | None = None) -> int:
    count = 0
    try:
        lines = path.read_text(errors="replace").splitlines()[1:]
    except FileNotFoundError:
        return 0
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue  # a line being written
        count += event.get("kind") == kind and source in (None, event.get("source"))
    return count


def wait_for(test: object, what: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while not test():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.2)


def one_run(
    sampled: bool,
    seconds: float,
    number: int,
    *,
    headless: bool,
    code: Path | None,
    warmup: float = WARMUP_S,
) -> Run:
    work = Path(tempfile.mkdtemp(prefix="anemon-dvt-watch-"))
    session = f"anemon-dvt-watch-{os.getpid()}-{number}"
    recording = work / "watch.jsonl"
    device, env = phone(work)
    try:
        command = [sys.executable, "-m", "anemon", "watch", "--device", "pymobiledevice3",
                   "--bundle", BUNDLE, "--log", LOG, "--process-s", "1" if sampled else "0",
                   "--record", str(recording), "--mirror", str(work / "mirror.log"),
                   *(["--headless"] if headless else [])]  # fmt: skip
        # a tmux server of its own (-L): a shared one would give the pane its own environment
        tmux = ["tmux", "-L", session]
        # in `work`: `python -m` puts its working directory first on the path, before PYTHONPATH
        watch_env = env if code is None else {**env, "PYTHONPATH": str(code.resolve())}
        subprocess.run([*tmux, "new-session", "-d", "-s", session, "-x", SIZE[0], "-y", SIZE[1],
                        "-c", str(work), "exec " + " ".join(command)],
                       env=watch_env, check=True)  # fmt: skip
        shown = subprocess.run([*tmux, "display-message", "-p", "-t", session, "#{pane_pid}"],
                               capture_output=True, text=True, check=True)  # fmt: skip
        pid = int(shown.stdout.strip())
        wait_for(lambda: recorded(recording, "trial") > 0, "the first trial")
        time.sleep(warmup)
        before_readings = recorded(recording, "telemetry", APP_SOURCE)
        began, before = time.monotonic(), cpu_s(pid)
        time.sleep(seconds)
        used, elapsed = cpu_s(pid) - before, time.monotonic() - began
        readings = recorded(recording, "telemetry", APP_SOURCE) - before_readings
        return Run(sampled, 100.0 * used / elapsed, readings)
    finally:
        subprocess.run(["tmux", "-L", session, "kill-server"], stderr=subprocess.DEVNULL)
        device.terminate()
        device.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)


def spread(values: list[float]) -> str:
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return (f"mean {statistics.mean(values):.2f} %  sd {sd:.2f}  "
            f"min {min(values):.2f}  max {max(values):.2f}  (n={len(values)})")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of each condition")
    parser.add_argument("--seconds", type=float, default=45.0, help="the measured window")
    parser.add_argument("--warmup", type=float, default=WARMUP_S,
                        help="seconds after the first trial before the window")  # fmt: skip
    parser.add_argument("--headless", action="store_true", help="watch --headless, no dashboard")
    parser.add_argument("--code", type=Path, help="run the watch from this checkout instead")
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        raise SystemExit("bench/dvt_watch.py needs tmux")
    runs: list[Run] = []
    for i in range(args.runs):
        for sampled in (i % 2 == 0, i % 2 != 0):  # ABBA...: neither always goes first
            run = one_run(sampled, args.seconds, len(runs), headless=args.headless,
                          code=args.code, warmup=args.warmup)  # fmt: skip
            runs.append(run)
            label = "sampled (--process-s 1)" if run.sampled else "not sampled (--process-s 0)"
            print(f"run {len(runs)}: {label}: {run.core_pct:.2f} % of a core, "
                  f"{run.readings} app readings", flush=True)  # fmt: skip
    on = [r.core_pct for r in runs if r.sampled]
    off = [r.core_pct for r in runs if not r.sampled]
    pairs = [a.core_pct - b.core_pct if a.sampled else b.core_pct - a.core_pct
             for a, b in zip(runs[::2], runs[1::2], strict=True)]  # fmt: skip
    view = "headless" if args.headless else "dashboard, tmux 120x40"
    print(f"\nwatch ({view}) CPU over {args.seconds:g} s, {args.warmup:g} s after the first "
          "trial, % of one core (utime + stime):")  # fmt: skip
    print(f"  sampled:     {spread(on)}")
    print(f"  not sampled: {spread(off)}")
    print(f"  sampled - not, per pair: {', '.join(f'{d:+.2f}' for d in pairs)}; {spread(pairs)}")
    print(f"  app readings per sampled run: {[r.readings for r in runs if r.sampled]}")
    print(f"  load average now: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
