"""A usbmuxd that accepts connections and never answers: `anemon devices` and `anemon watch
--device pymobiledevice3` give up after a bounded time with one line naming the socket, and
end on SIGINT and SIGTERM before that; nothing is left running (the process table)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from anemon.devices.pmd3 import connection
from tests.devices.helpers import BUNDLE, LOG, SilentUsbmuxd
from tests.devices.test_devices_cli import run_cli
from tests.process_table import TIMEOUT_S, in_group, needs_proc

BOUND_S = 0.5
"""The answer bound of the in-process tests (anemon's own is connection.ANSWER_S)."""
WATCH = ["watch", "--device", "pymobiledevice3", "--bundle", BUNDLE, "--log", LOG,
         "--headless", "--no-record"]  # fmt: skip
DEVICES = ["devices", "--backend", "pymobiledevice3"]


def silent_line(address: str, bound_s: float) -> str:
    return (
        f"usbmuxd at {address} accepted the connection but did not answer in {bound_s:g} s: "
        "restart usbmuxd, or point USBMUXD_SOCKET_ADDRESS at one that answers"
    )


@pytest.fixture
def silent(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[SilentUsbmuxd]:
    with SilentUsbmuxd() as usbmuxd:
        monkeypatch.setenv("USBMUXD_SOCKET_ADDRESS", usbmuxd.address)
        monkeypatch.setenv("HOME", str(tmp_path))  # pymobiledevice3's pair records
        yield usbmuxd


@pytest.mark.parametrize(
    ("argv", "prefix"),
    [(DEVICES, "anemon: pymobiledevice3: "), (WATCH, "anemon: ")],
    ids=["devices", "watch"],
)
def test_a_silent_usbmuxd_is_given_up_on_in_one_line(
    silent: SilentUsbmuxd,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    prefix: str,
) -> None:
    monkeypatch.setattr(connection, "ANSWER_S", BOUND_S)
    assert run_cli(argv) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == prefix + silent_line(silent.address, BOUND_S)
    assert not [line for line in err if "Traceback" in line or "internal error" in line]


def test_devices_all_reports_a_silent_usbmuxd_as_unavailable(
    silent: SilentUsbmuxd, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    monkeypatch.setattr(connection, "ANSWER_S", BOUND_S)
    monkeypatch.setenv("PATH", "/nonexistent")  # no xcrun
    assert run_cli(["devices", "--json"]) == 0
    backends = json.loads(capsys.readouterr().out)["backends"]
    assert backends["pymobiledevice3"] == "unavailable: " + silent_line(silent.address, BOUND_S)
    assert backends["sim"] == "ok"


def start(argv: list[str], silent: SilentUsbmuxd, tmp_path: Path) -> subprocess.Popen[str]:
    """`anemon ARGV` in a session of its own (its process group is what it leaves behind)."""
    env = os.environ | {"USBMUXD_SOCKET_ADDRESS": silent.address, "HOME": str(tmp_path)}
    return subprocess.Popen([sys.executable, "-m", "anemon", *argv], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)  # fmt: skip


def finish(process: subprocess.Popen[str]) -> str:
    """Its stderr once it has exited (a hang guard); nothing of it left running."""
    try:
        _, err = process.communicate(timeout=TIMEOUT_S)
    finally:
        process.kill()
        process.wait()
    assert in_group(process.pid) == []
    return err


@needs_proc
@pytest.mark.parametrize(
    ("argv", "sig", "status"),
    [
        (DEVICES, signal.SIGINT, 130),
        (DEVICES, signal.SIGTERM, -signal.SIGTERM),  # no handler: the default action
        (WATCH, signal.SIGINT, 0),  # docs/spec/cli.md: a signal ends watch with 0
        (WATCH, signal.SIGTERM, 0),
    ],
    ids=["devices-SIGINT", "devices-SIGTERM", "watch-SIGINT", "watch-SIGTERM"],
)
def test_a_signal_ends_a_command_waiting_on_a_silent_usbmuxd(
    silent: SilentUsbmuxd, tmp_path: Path, argv: list[str], sig: signal.Signals, status: int
) -> None:
    process = start(argv, silent, tmp_path)
    assert silent.accepted.wait(TIMEOUT_S), "anemon never reached usbmuxd"
    process.send_signal(sig)
    err = finish(process)
    assert process.returncode == status, err
    assert "Traceback" not in err


@needs_proc
@pytest.mark.slow
def test_watch_gives_up_on_a_silent_usbmuxd_on_its_own(silent: SilentUsbmuxd, tmp_path: Path):
    """With anemon's own bound (connection.ANSWER_S), in a process of its own."""
    process = start(WATCH, silent, tmp_path)
    err = finish(process)
    assert process.returncode == 1
    assert err.splitlines()[-1] == "anemon: " + silent_line(silent.address, connection.ANSWER_S)
