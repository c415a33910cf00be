"""The real program in a real terminal (not a timed test): `anemon watch` and `anemon replay` as
processes in tmux panes, measured the user's way.

1. CPU of `anemon watch LOG` (120x40, a log of 10,000 trials), from the process's own ticks
   (/proc/PID/stat utime + stime) over each window: idle (no new lines; target 0.2 % of a
   core), then a TRIAL line appended every 4.5 s (target 0.5 %), and from the two the CPU a
   trial costs (target 10 ms).
   And of `anemon replay` of the 10,000-trial recording playing at 1x (120x40, from 5 s in):
   no target of its own in the issue; held to a live watch's with power every second (1 %),
   which it resembles (a trial and a power reading every 4.5 s, the clock every second).
2. CPU of `anemon watch --device pymobiledevice3` against the virtual iPhone
   (`python -m anemon.devices.virtual`), device power read every 1 s and the app's trials
   mirrored as they come (target 1 % of a core; the virtual iPhone's own CPU is not counted).
3. Keys: from `tmux send-keys` to the first capture-pane that differs, each press from a
   settled screen, at 120x40 and 200x60: `l`, `?` and `m` in a live watch of the 10,000-trial
   log; every replay key in a paused `anemon replay` of a 10,000-trial recording (targets:
   median 50 ms, max 100 ms per key).

4. Quitting: from `tmux send-keys q` to the process's end, in a live watch of the 10,000-trial
   log and in a paused replay of the 10,000-trial recording, at 120x40: the shell's prompt is
   back then (target: the keys' 100 ms).

Each figure is printed with its runs, their spread, the target and met/MISSED. The machine's
load average is printed first: on a loaded machine the ticks still count this process's work,
the key latencies much less so. Needs tmux (and Linux's /proc).

`--code DIR`: the commands run another checkout's anemon (a before/after; the virtual iPhone
and the recordings stay this checkout's).

Run: .venv/bin/python bench/terminal.py [--quick] [--only cpu|device|keys|quit] [--code DIR]
The full run takes ~14 minutes (3 runs of 45 s windows, 2 of the device, 5 presses per key,
5 quits of each), --quick ~4 (one run of 20 s windows, 3 presses per key, 3 quits).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tmux
from dashboard import ARMS, events  # the pilot bench's arms and trials
from tmux import ROOT, Pane, anemon, cpu_s

from anemon.recording.writer import Recorder, make_header

PER_ARM = 5_000
"""Trials per arm in the watched log and the replayed recording (10,000 in all)."""
TRIAL_EVERY_S = 4.5
POWER_S = 1.0
SIZES = ((120, 40), (200, 60))
LIVE_KEYS = ("l", "?", "m")
"""The keys (tmux's names) a live watch answers that change its screen (`?` and `m` are
closed after each press)."""
REPLAY_KEYS = ("Space", "+", "-", "Right", "Left", ".", ",", "End", "Home", "l", "?", "m")
UNDO = {"?": "Escape", "m": "Escape", "Space": "Space", "End": "Home"}
"""What puts the screen back after a key that opens something, resumes the replay or seeks
to its end (End again would change nothing)."""
BEFORE = {"Home": "End"}
"""What a key needs first to change the screen (Home at the start changes nothing)."""
SHOWN = {"Right": "right (+10s)", "Left": "left (-10s)", ".": ". (+1m)", ",": ", (-1m)"}


@dataclass(frozen=True)
class Runs:
    """One figure's runs; the worst is held to the target."""

    what: str
    values: list[float]
    target: float
    unit: str

    def line(self) -> str:
        shown = ", ".join(f"{v:.2f}" for v in self.values)
        runs = len(self.values)
        spread = f"{min(self.values):.2f}–{max(self.values):.2f}" if runs > 1 else ""
        return (
            f"  {self.what}: {shown} {self.unit} ({runs} run{'s' * (runs > 1)}"
            f"{', spread ' + spread if spread else ''}; target {self.target:g} {self.unit}: "
            f"{verdict(max(self.values), self.target)})"
        )


@dataclass(frozen=True)
class Presses:
    """One key's presses: their median and max, each against its target."""

    what: str
    took_ms: list[float]

    def line(self) -> str:
        median, worst = statistics.median(self.took_ms), max(self.took_ms)
        shown = ", ".join(f"{v:.0f}" for v in self.took_ms)
        return (
            f"  {self.what}: {shown} ms ({len(self.took_ms)} presses): median {median:.0f} ms "
            f"(target 50: {verdict(median, 50)}), max {worst:.0f} ms "
            f"(target 100: {verdict(worst, 100)})"
        )


def verdict(value: float, target: float) -> str:
    return "met" if value <= target else "MISSED"


def trial_line(arm: str, i: int, t: float) -> str:
    return (
        f"TRIAL arm={arm} trial={i} warmup=0 t={t:.1f} prompt_tokens=128 "
        f"prompt_tps={2000 + i % 13 * 10} decode_tps={50 + i % 7} gen=256 "
        f"battery={95 - i // 10_000} thermal=fair\n"
    )


def log_lines(per_arm: int) -> str:
    """A line-protocol log of two arms' trials, for `anemon watch`."""
    out = []
    for k, arm in enumerate(ARMS):
        out.append(f"START arm={arm} model=M compute=ane bits=8 os=1 free_gb=38 mode=sustain\n")
        out += [trial_line(arm, i, 1 + i * 4.5 + k * per_arm * 4.5) for i in range(per_arm)]
    return "".join(out)


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


@contextmanager
def watched_log(tmp: Path) -> Iterator[Pane]:
    log = tmp / "bench.log"
    log.write_text(log_lines(PER_ARM))
    with Pane(anemon("watch", str(log), "--no-record", "--layout", "default"), (120, 40), tmp) as p:
        p.settled(has="arm")
        yield p


def cpu_watch(tmp: Path, window_s: float) -> tuple[float, float, float]:
    """One run: % of a core idle, % with a trial every 4.5 s, and ms of CPU per trial."""
    log = tmp / "bench.log"
    with watched_log(tmp) as pane:
        time.sleep(3.0)  # past the redraw timer's slowing down (scheduler.IDLE_AFTER_S)
        start = cpu_s(pane.pid)
        time.sleep(window_s)
        idle = cpu_s(pane.pid) - start
        start, began, n = cpu_s(pane.pid), time.monotonic(), 0
        t = 1 + PER_ARM * 4.5 * 2
        while (due := began + n * TRIAL_EVERY_S) < began + window_s:
            time.sleep(max(0.0, due - time.monotonic()))
            with log.open("a") as f:
                f.write(trial_line(ARMS[1], PER_ARM + n, t + n * TRIAL_EVERY_S))
            n += 1
        time.sleep(max(0.0, began + window_s - time.monotonic()))
        busy = cpu_s(pane.pid) - start
    per_trial = (busy - idle) / n
    return 100 * idle / window_s, 100 * busy / window_s, 1000 * per_trial


def cpu_replay(tmp: Path, window_s: float) -> float:
    """One run: % of a core of a replay of the 10,000-trial recording playing at 1x."""
    rec = recording(tmp)
    command = anemon("replay", str(rec), "--layout", "default", "--speed", "1")
    with Pane(command, (120, 40), tmp) as pane:
        pane.settled(quiet_s=0.0, has="arm")
        time.sleep(5.0)  # past the start-up's reading of the rest (`replay.START_AFTER_S`)
        start = cpu_s(pane.pid)
        time.sleep(window_s)
        return 100 * (cpu_s(pane.pid) - start) / window_s


def cpu_device(tmp: Path, window_s: float) -> tuple[float, int]:
    """One run: % of a core of `watch --device pymobiledevice3` with power every 1 s, and the
    trials its mirror got meanwhile."""
    phone = subprocess.Popen(
        [sys.executable, "-m", "anemon.devices.virtual"], stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, text=True, env=os.environ | {"PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    try:
        assert phone.stdout is not None
        export = re.fullmatch(r"export (\w+)=(\S+)\n", phone.stdout.readline())
        if export is None:
            raise SystemExit("bench: the virtual iPhone did not print its address")
        mirror = tmp / "mirror.log"
        mirror.unlink(missing_ok=True)
        command = anemon(
            "watch", "--device", "pymobiledevice3", "--bundle", "com.example.bench",
            "--log", "Documents/sustain/bench.log", "--mirror", str(mirror),
            "--power-s", f"{POWER_S:g}", "--no-record", "--layout", "default",
        )  # fmt: skip
        with Pane(command, (120, 40), tmp, {export[1]: export[2]}) as pane:
            pane.settled(quiet_s=0.0, has="arm")  # connected: the first trial is shown
            time.sleep(3.0)
            before, start = trials_in(mirror), cpu_s(pane.pid)
            time.sleep(window_s)
            used, trials = cpu_s(pane.pid) - start, trials_in(mirror) - before
    finally:
        phone.terminate()
        phone.wait(10)
    return 100 * used / window_s, trials


def trials_in(path: Path) -> int:
    return path.read_bytes().count(b"\nTRIAL ") if path.exists() else 0


def presses(pane: Pane, key: str, times: int) -> list[float]:
    """`times` presses of `key`, each from a settled screen (after `BEFORE`), each put back
    after (`UNDO`); a press that changed nothing within 3 s counts as infinite."""
    took = []
    for _ in range(times):
        if key in BEFORE:
            pane.keys(BEFORE[key])
        before = pane.settled(quiet_s=0.3)
        latency = pane.changed_after(before, key)
        took.append(float("inf") if latency is None else latency * 1000)
        if key == "Space":
            time.sleep(0.3)  # playing: the screen changes on its own until paused again
        elif key in UNDO:
            pane.settled(quiet_s=0.3, timeout_s=30)
        if key in UNDO:
            pane.keys(UNDO[key])
    return took


def keys_in(pane: Pane, where: str, keys: Sequence[str], times: int) -> list[Presses]:
    return [Presses(f"{where}: `{SHOWN.get(key, key)}`", presses(pane, key, times)) for key in keys]


def recording(tmp: Path) -> Path:
    """A 10,000-trial recording (the pilot bench's trials, a power reading before each), made
    once for every part that replays it."""
    path = tmp / "bench.jsonl"
    if path.exists():
        return path
    with Recorder(path, make_header(source="bench/terminal.py")) as recorder:
        for event in events(PER_ARM, with_power=True):
            recorder.write(event)
    return path


def key_figures(tmp: Path, times: int) -> list[Presses]:
    rec = recording(tmp)
    log = tmp / "bench.log"
    log.write_text(log_lines(PER_ARM))
    out: list[Presses] = []
    for size in SIZES:
        at = f"{size[0]}x{size[1]}"
        with Pane(anemon("watch", str(log), "--no-record", "--layout", "default"), size, tmp) as p:
            p.settled(has="arm")
            out += keys_in(p, f"live watch {at}", LIVE_KEYS, times)
        with Pane(anemon("replay", str(rec), "--layout", "default"), size, tmp) as p:
            p.settled(quiet_s=0.0, has="arm")
            p.keys("Space")  # paused from here on (the space key's presses resume and re-pause)
            p.settled()
            out += keys_in(p, f"paused replay {at}", REPLAY_KEYS, times)
    return out


def quit_figures(tmp: Path, times: int) -> list[Runs]:
    """`q` to the process's end, `times` fresh processes each: a live watch, a paused replay."""
    log = tmp / "bench.log"
    log.write_text(log_lines(PER_ARM))
    commands = {
        "a live watch": (anemon("watch", str(log), "--no-record", "--layout", "default"), ""),
        "a paused replay": (anemon("replay", str(recording(tmp)), "--layout", "default"), "Space"),
    }
    out = []
    for where, (command, first) in commands.items():
        took = []
        for _ in range(times):
            with Pane(command, SIZES[0], tmp) as p:
                p.settled(quiet_s=0.0 if first else 1.0, has="arm")  # a replay plays: no quiet
                if first:
                    p.keys(first)
                    p.settled()
                ended = p.ended_after("q")
                if ended is None:
                    raise SystemExit(f"bench: `q` did not end {where}")
                took.append(1000 * ended)
        out.append(Runs(f"`q` in {where} of 10,000 trials at 120x40, to the process's end",
                        took, 100, "ms"))  # fmt: skip
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one run of 20 s, 3 presses a key")
    parser.add_argument("--only", choices=("cpu", "device", "keys", "quit"), action="append",
                        help="run only these parts (repeatable)")  # fmt: skip
    parser.add_argument("--code", type=Path, help="run another checkout's anemon")
    args = parser.parse_args()
    if args.code is not None:
        tmux.CODE = args.code.resolve()
    if shutil.which("tmux") is None or not Path("/proc/self/stat").exists():
        raise SystemExit("bench/terminal.py needs tmux and /proc (Linux)")
    parts = set(args.only or ("cpu", "device", "keys", "quit"))
    runs, window_s, times = (1, 20.0, 3) if args.quick else (3, 45.0, 5)
    print(f"load average at start: {load()} on {os.cpu_count()} cores")
    figures: list[Runs | Presses] = []
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        if "cpu" in parts:
            got = [cpu_watch(tmp, window_s) for _ in range(runs)]
            what = f"`anemon watch LOG` at 120x40, {window_s:g} s windows"
            figures += [
                Runs(f"{what}, idle", [g[0] for g in got], 0.2, "% of a core"),
                Runs(f"{what}, a trial every 4.5 s", [g[1] for g in got], 0.5, "% of a core"),
                Runs(f"{what}, CPU per trial", [g[2] for g in got], 10, "ms"),
                Runs(f"`anemon replay REC --speed 1` at 120x40, playing, {window_s:g} s windows",
                     [cpu_replay(tmp, window_s) for _ in range(runs)], 1.0, "% of a core"),
            ]  # fmt: skip
        if "device" in parts:
            # two runs in the full bench (the phone's start-up is most of a run's minute)
            got_device = [cpu_device(tmp, window_s) for _ in range(min(runs, 2))]
            trials = ", ".join(str(g[1]) for g in got_device)
            what = (f"`anemon watch --device pymobiledevice3` (virtual iPhone), power every "
                    f"{POWER_S:g} s, {trials} trials in {window_s:g} s")  # fmt: skip
            figures.append(Runs(what, [g[0] for g in got_device], 1.0, "% of a core"))
        if "keys" in parts:
            figures += key_figures(tmp, times)
        if "quit" in parts:
            figures += quit_figures(tmp, times)
    print(f"load average at the end: {load()}")
    for figure in figures:
        print(figure.line())


if __name__ == "__main__":
    main()
