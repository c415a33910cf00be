"""A command in a private tmux server's pane (a real terminal for the benches): its screen,
its keys, the CPU ticks of the process it runs.

Each pane has its own server (`tmux -L`), so nothing is shared with a tmux the user runs, and
closing it ends the server and makes sure the process went with it.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CODE = ROOT
"""The checkout whose anemon the panes run: this one, or another's for a before/after
(`bench/terminal.py --code DIR`)."""
TICK_S = 1 / os.sysconf("SC_CLK_TCK")
"""One tick of /proc/PID/stat's utime and stime."""


def anemon(*args: str) -> list[str]:
    """The command line of `anemon ARGS` as a user runs it (this checkout's code)."""
    return [sys.executable, "-m", "anemon", *args]


def _stat(pid: int) -> list[str]:
    """/proc/PID/stat's fields from the third (the state) on: after the command name, which may
    hold spaces."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rindex(")") + 2 :].split()


def cpu_s(pid: int) -> float:
    """The CPU time (user + system, every thread) a process has used, from its own ticks."""
    fields = _stat(pid)
    return (int(fields[11]) + int(fields[12])) * TICK_S  # utime, stime: fields 14 and 15


def running(pid: int) -> bool:
    """Whether `pid` is a process that has not ended (a zombie has)."""
    try:
        return _stat(pid)[0] != "Z"
    except FileNotFoundError:
        return False


class Pane:
    """`command` in a pane of `size` (columns, rows), started in `cwd` with `env` added."""

    def __init__(
        self,
        command: Sequence[str],
        size: tuple[int, int],
        cwd: Path,
        env: dict[str, str] | None = None,
    ) -> None:
        self.socket = f"anemon-bench-{os.getpid()}-{id(self)}"
        base = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "TMUX")}
        base |= {"PYTHONPATH": str(CODE), "TERM": "xterm-256color"} | (env or {})
        # exec: the pane's process is the command itself, whose ticks are what is measured
        line = "exec " + shlex.join(command)
        subprocess.run(
            ["tmux", "-L", self.socket, "-f", os.devnull, "new-session", "-d", "-s", "S",
             "-x", str(size[0]), "-y", str(size[1]), "-c", str(cwd), line],
            env=base, check=True, capture_output=True,
        )  # fmt: skip
        self.pid = int(self.tmux("display-message", "-p", "-t", "S", "#{pane_pid}").strip())

    def tmux(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True)
        return done.stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "S")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "S", *keys)

    def settled(self, quiet_s: float = 1.0, timeout_s: float = 120.0, has: str = "") -> str:
        """The screen once it has not changed for `quiet_s` (and shows `has`)."""
        start = since = time.perf_counter()
        last = self.screen()
        while time.perf_counter() - start < timeout_s:
            time.sleep(0.05)
            now = self.screen()
            if now != last:
                last, since = now, time.perf_counter()
            elif time.perf_counter() - since >= quiet_s and has in now:
                return now
        raise SystemExit(f"bench: the screen did not settle in {timeout_s:g} s:\n{last}")

    def changed_after(self, before: str, key: str, timeout_s: float = 3.0) -> float | None:
        """Seconds from sending `key` to the first capture that differs from `before` (polled
        as fast as tmux answers: the figure is an upper bound by one capture, a few ms);
        None when the screen did not change within `timeout_s`."""
        start = time.perf_counter()
        self.keys(key)
        while time.perf_counter() - start < timeout_s:
            if self.screen() != before:
                return time.perf_counter() - start
        return None

    def ended_after(self, key: str, timeout_s: float = 10.0) -> float | None:
        """Seconds from sending `key` to the process's end (gone, or a zombie: tmux reaps its
        pane's process a second or more later, which a shell does not wait for); None when it
        still runs after `timeout_s`."""
        start = time.perf_counter()
        self.keys(key)
        while time.perf_counter() - start < timeout_s:
            if not running(self.pid):
                return time.perf_counter() - start
            time.sleep(0.002)
        return None

    def close(self) -> None:
        """End the server and make sure the command is gone (one has been seen to outlive
        its server's hang-up and then ignore SIGTERM)."""
        self.tmux("kill-server")
        for _ in range(50):
            try:
                os.kill(self.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)
        print(f"bench: pid {self.pid} outlived its tmux server: killed")
        os.kill(self.pid, signal.SIGKILL)

    def __enter__(self) -> Pane:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
