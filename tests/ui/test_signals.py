"""SIGINT, SIGTERM and SIGHUP end `watch` and `demo` in the dashboard, in a real terminal (tmux),
exactly as headless: the app stopped, pending lines read, the abort recorded, the recording
closed, the terminal restored (no alternate screen, no mouse tracking, the cursor shown, the
tty back in canonical mode with echo), and exit 0 (watch) or 130 (demo, as run). A signal in the
first moments after start-up (before the dashboard, while Python imports) is handled the same
way: `anemon.cli` holds it until `run_feeds` acts on it.

Each test has its own tmux server (`-L`), so neither the operator's tmux nor another test's
can interfere; COLUMNS/LINES are cleared so the pane's size (120x40) is what anemon sees.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.process_table import running

REPO = Path(__file__).resolve().parents[2]
TIMEOUT_S = 30.0
LINE = (
    "TRIAL arm=a trial={n} warmup=0 t={n}.0 prompt_tokens=128 prompt_tps=3821.8 "
    "decode_tps=76.5 gen=256\n"
)
EXIT = {"watch": 0, "demo": 130}
EXIT_ABORTED = 130
"""A run the operator aborted (`X` twice), then left."""
"""docs/spec/cli.md: a signal ends watch with 0, run and demo with 130."""
RESTORED = {
    "alternate_on": "0", "mouse_any_flag": "0", "mouse_button_flag": "0",
    "mouse_standard_flag": "0", "mouse_all_flag": "0", "cursor_flag": "1",
}  # fmt: skip
"""The pane's state once anemon has gone: as a shell found it."""

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


class Pane:
    """`anemon ARGS` in a 120x40 tmux pane of a private server; its pid, exit status and the
    pane's state afterwards (`stty -a` of the pane's tty, run after anemon exits)."""

    def __init__(self, work: Path, *args: str) -> None:
        self.work = work
        self.socket = f"anemon-sig-{os.getpid()}-{work.name}"
        self.pid_file, self.status, self.stty = work / "pid", work / "status", work / "stty"
        inner = work / "anemon.sh"  # writes its pid, then becomes anemon: the pid is anemon's
        inner.write_text(f'echo $$ > pid; exec {shlex.quote(sys.executable)} -m anemon "$@"\n')
        command = (
            f"sh anemon.sh {shlex.join(args)}; echo $? > status.tmp; stty -a > stty; "
            "mv status.tmp status; sleep 600"
        )
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "TMUX")}
        env["PYTHONPATH"] = str(REPO)
        subprocess.run(
            ["tmux", "-L", self.socket, "-f", os.devnull, "new-session", "-d", "-s", "S",
             "-x", "120", "-y", "40", "-c", str(work), command],
            env=env, check=True, capture_output=True,
        )  # fmt: skip

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=True
        )
        return done.stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "S")

    def flags(self) -> dict[str, str]:
        shown = self.tmux("display", "-p", "-t", "S", " ".join(f"#{{{f}}}" for f in RESTORED))
        return dict(zip(RESTORED, shown.split(), strict=True))

    def pid(self) -> int:
        until(lambda: self.pid_file.exists() and self.pid_file.read_text().strip(), "the pid")
        return int(self.pid_file.read_text())

    def wait_for_the_dashboard(self) -> None:
        until(
            lambda: self.flags()["alternate_on"] == "1" and "Quit" in self.screen(),
            "the dashboard",
            lambda: self.screen(),
        )

    def exit_status(self) -> int:
        until(self.status.exists, "anemon to exit", lambda: self.screen())
        return int(self.status.read_text())

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


def until(predicate, what: str, shown=lambda: "") -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}\n{shown()}")
        time.sleep(0.05)


@pytest.fixture
def start(tmp_path: Path) -> Iterator:
    panes: list[Pane] = []

    def start(*args: str) -> Pane:
        panes.append(Pane(tmp_path, *args))
        return panes[-1]

    yield start
    for pane in panes:
        pane.close()


def command(name: str, work: Path) -> tuple[str, ...]:
    """`watch` a log (one trial line in it) or the `demo` (fast), recording to work/rec.jsonl."""
    if name == "watch":
        (work / "bench.log").write_text(LINE.format(n=1))
        return ("watch", "bench.log", "--record", "rec.jsonl")
    return ("demo", "--speed", "60", "--record", "rec.jsonl")


def assert_ended_cleanly(pane: Pane, name: str, sig: signal.Signals) -> None:
    assert pane.exit_status() == EXIT[name]
    assert pane.flags() == RESTORED
    stty = pane.stty.read_text().split()
    assert "icanon" in stty and "echo" in stty, stty  # not left raw
    assert "Traceback" not in pane.screen()
    events = [json.loads(line) for line in (pane.work / "rec.jsonl").read_text().splitlines()]
    if name == "watch":  # every line read, the recording closed whole
        assert [e.get("trial") for e in events[1:] if e.get("kind") == "trial"] == [1]
    else:  # the abort recorded, last
        assert events[-2]["kind"] == "phase" and events[-2]["phase"] == "aborted"
        assert events[-1]["kind"] == "summary" and events[-1]["status"] == "aborted"


@pytest.mark.parametrize(
    "sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name
)
@pytest.mark.parametrize("name", ["watch", "demo"])
def test_a_signal_ends_the_dashboard_as_headless(
    name: str, sig: signal.Signals, start, tmp_path: Path
) -> None:
    pane = start(*command(name, tmp_path))
    pane.wait_for_the_dashboard()
    os.kill(pane.pid(), sig)
    assert_ended_cleanly(pane, name, sig)
    if name == "demo":
        lines = (tmp_path / "rec.jsonl").read_text().splitlines()
        notes = [e["note"] for e in map(json.loads, lines) if e.get("kind") == "marker"]
        assert notes[-1] == f"abort session ({sig.name})"


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
@pytest.mark.parametrize(
    ("name", "sig"), [("watch", signal.SIGHUP), ("demo", signal.SIGTERM)], ids=["watch", "demo"]
)
def test_a_signal_right_after_start_up_is_handled_the_same_way(
    name: str, sig: signal.Signals, start, tmp_path: Path
) -> None:
    """Sent as soon as anemon catches it (`anemon.cli` holds signals first thing): Python is
    still importing, nothing is shown. Waiting for the handler, not a fixed 0.1 s, keeps a
    loaded machine from sending it before Python has started at all."""
    pane = start(*command(name, tmp_path))
    pid = pane.pid()
    until(lambda: catches(pid, sig), f"anemon to catch {sig.name}")
    os.kill(pid, sig)
    assert_ended_cleanly(pane, name, sig)


def catches(pid: int, sig: signal.Signals) -> bool:
    """The process is Python running anemon (no longer the shell before its exec) and has a
    handler for `sig` (the SigCgt mask of /proc/PID/status)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        python = b"-m\0anemon\0" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return False
    if not python:
        return False
    caught = next(line for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught.split()[1], 16) >> (sig - 1) & 1)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_the_terminal_going_away_ends_the_dashboard(start, tmp_path: Path) -> None:
    """The tmux server killed under a busy dashboard (a closed window, a dropped SSH session):
    writes to the gone terminal fail. Textual's writer thread died of that, its queue filled,
    and the process hung for good, holding its recording open and deaf to SIGTERM. Now it
    ends as on SIGHUP: every line read, the recording closed with its summary."""
    trials = 60_000  # enough drawing that the writes queued after the hang-up fill the queue
    with (tmp_path / "bench.log").open("w") as log:
        log.writelines(LINE.format(n=n) for n in range(1, trials + 1))
    pane = start("watch", "bench.log", "--record", "rec.jsonl")
    pid = pane.pid()
    pane.wait_for_the_dashboard()
    pane.close()
    until(lambda: not running(pid), "anemon to exit after its terminal went away")
    events = [json.loads(line) for line in (tmp_path / "rec.jsonl").read_text().splitlines()]
    assert sum(e.get("kind") == "trial" for e in events) == trials
    assert events[-1]["kind"] == "summary"


# ---- the confirmation of keys that end something, in a real terminal -----------------------


def wait_for_text(pane: Pane, text: str) -> None:
    until(lambda: text in pane.screen(), repr(text), lambda: pane.screen())


@pytest.mark.parametrize(("key", "what"), [("q", "end the run"), ("C-c", "end the run")])
def test_during_a_run_one_press_asks_and_a_second_ends_it(
    key: str, what: str, start, tmp_path: Path
) -> None:
    """`q` or ctrl+c once: the run goes on and the screen says how to confirm; again within
    3 s: the run ends (130, aborted as on a signal) and the terminal is restored."""
    pane = start("demo", "--speed", "50", "--record", "rec.jsonl")
    pane.wait_for_the_dashboard()
    pane.tmux("send-keys", "-t", "S", key)
    shown = "^c" if key == "C-c" else key
    wait_for_text(pane, f"press {shown} again within 3 s to {what}")
    assert not pane.status.exists() and pane.flags()["alternate_on"] == "1"  # still running
    pane.tmux("send-keys", "-t", "S", key)
    assert pane.exit_status() == 130
    assert pane.flags() == RESTORED
    assert "Traceback" not in pane.screen()
    events = [json.loads(line) for line in (tmp_path / "rec.jsonl").read_text().splitlines()]
    assert events[-2]["kind"] == "phase" and events[-2]["phase"] == "aborted"
    assert events[-1]["kind"] == "summary" and events[-1]["status"] == "aborted"


def test_in_a_replay_one_q_quits_at_once(start, tmp_path: Path) -> None:
    pane = start("replay", str(REPO / "recordings" / "sim-ab-2b.jsonl"), "--speed", "max")
    pane.wait_for_the_dashboard()
    pane.tmux("send-keys", "-t", "S", "q")
    assert pane.exit_status() == 0
    assert pane.flags() == RESTORED
    assert "Traceback" not in pane.screen()


def test_during_a_run_x_asks_and_a_second_x_aborts_the_session(start, tmp_path: Path) -> None:
    pane = start("demo", "--speed", "50", "--record", "rec.jsonl")
    pane.wait_for_the_dashboard()
    pane.tmux("send-keys", "-t", "S", "X")
    wait_for_text(pane, "press X again within 3 s to abort the session")
    pane.tmux("send-keys", "-t", "S", "X")
    wait_for_text(pane, "run aborted, recording at")  # the dashboard stays, the run is over
    assert not pane.status.exists()
    pane.tmux("send-keys", "-t", "S", "q")  # now at once
    status = pane.exit_status()
    assert pane.flags() == RESTORED
    events = [json.loads(line) for line in (tmp_path / "rec.jsonl").read_text().splitlines()]
    assert events[-2]["kind"] == "phase" and events[-2]["phase"] == "aborted"
    assert events[-1]["kind"] == "summary" and events[-1]["status"] == "aborted"
    assert status == EXIT_ABORTED, status
