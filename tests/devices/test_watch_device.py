"""`anemon watch --device pymobiledevice3` follows the virtual iPhone's log, exactly once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from anemon.devices.virtual import VirtualIPhone
from tests.devices.helpers import BUNDLE, LOG, PhoneThread, StandInPhone
from tests.recorded import recorded, wait_for

pytestmark = pytest.mark.slow


def test_watch_follows_the_virtual_iphone(tmp_path):
    stand_in = StandInPhone()
    stand_in.append("START arm=a compute=ane\n")
    recording = tmp_path / "rec.jsonl"
    with PhoneThread(VirtualIPhone(stand_in, bundles=[BUNDLE])) as phone:
        env = os.environ | {"USBMUXD_SOCKET_ADDRESS": phone.usbmux_address, "HOME": str(tmp_path)}
        proc = subprocess.Popen(
            [sys.executable, "-m", "anemon", "watch", "--device", "pymobiledevice3",
             "--bundle", BUNDLE, "--log", LOG, "--poll", "0.05", "--headless",
             "--record", str(recording), "--mirror", str(tmp_path / "mirror.log")],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            for i in range(40):
                stand_in.append(f"TRIAL arm=a trial={i} decode_tps={50 + i} thermal=fair\n")
                if i % 10 == 0:
                    time.sleep(0.05)
            assert wait_for(lambda: len(recorded(recording, "trial")) == 40), "fell behind"
            assert wait_for(lambda: recorded(recording, "telemetry"))
        finally:
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert [e["trial"] for e in recorded(recording, "trial")] == list(range(40))
    (reading, *_) = recorded(recording, "telemetry")
    assert reading["battery"] == 87 and reading["temperature_c"] == 31.25
    assert (tmp_path / "mirror.log").read_bytes() == bytes(stand_in.files[LOG])
    assert "Virtual iPhone" in out  # the summary's title names the device


def test_watch_device_needs_bundle_and_log(capsys):
    from anemon.cli import main

    assert main(["watch", "--device", "pymobiledevice3", "--headless"]) == 2
    assert "--bundle ID and --log PATH" in capsys.readouterr().err


def test_watch_console_reads_the_apps_os_trace_lines(tmp_path):
    stand_in = StandInPhone()
    recording = tmp_path / "rec.jsonl"
    with PhoneThread(VirtualIPhone(stand_in, bundles=[BUNDLE])) as phone:
        env = os.environ | {"USBMUXD_SOCKET_ADDRESS": phone.usbmux_address, "HOME": str(tmp_path)}
        proc = subprocess.Popen(
            [sys.executable, "-m", "anemon", "watch", "--device", "pymobiledevice3",
             "--bundle", BUNDLE, "--console", "BenchApp", "--headless", "--record", str(recording)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            assert wait_for(lambda: phone.os_trace.streams >= 1), "the console never opened"
            for i in range(10):
                stand_in.append(f"TRIAL arm=a trial={i} decode_tps={50 + i}\n")
            assert wait_for(lambda: len(recorded(recording, "trial")) == 10), "fell behind"
        finally:
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert [e["trial"] for e in recorded(recording, "trial")] == list(range(10))


def test_console_needs_the_pymobiledevice3_backend(capsys):
    from anemon.cli import main

    argv = ["watch", "--device", "devicectl", "--bundle", BUNDLE, "--console", "BenchApp"]
    assert main([*argv, "--headless"]) == 2
    assert "--console needs --device pymobiledevice3" in capsys.readouterr().err
