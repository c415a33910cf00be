"""`anemon watch --device pymobiledevice3` follows the virtual iPhone's log, exactly once, and
records device power; through usbmuxd, or over the network with the cable out."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from anemon.devices.virtual import NetworkLockdownd, VirtualIPhone
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
    assert reading["battery"] == 87.39 and reading["temperature_c"] == 31.25
    assert reading["power_w"] == 4.92 and reading["charging"] is True
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


def test_watch_over_the_network_records_power_with_the_cable_out(tmp_path):
    stand_in = StandInPhone()
    stand_in.append("START arm=a compute=ane\n")
    recording = tmp_path / "rec.jsonl"
    runner = PhoneThread(VirtualIPhone(stand_in, bundles=[BUNDLE]))
    with runner as phone:
        network = NetworkLockdownd(phone)
        runner.run(network.start())
        # usbmuxd only for the pair record, as on a Mac; the phone is reached at --host
        env = os.environ | {"USBMUXD_SOCKET_ADDRESS": phone.usbmux_address, "HOME": str(tmp_path)}
        proc = subprocess.Popen(
            [sys.executable, "-m", "anemon", "watch", "--device", "pymobiledevice3",
             "--connect", "network", "--host", network.address, "--power-s", "0.05",
             "--bundle", BUNDLE, "--log", LOG, "--poll", "0.05", "--headless",
             "--record", str(recording)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            assert wait_for(lambda: recorded(recording, "start")), "never connected"
            readings = stand_in.readings
            runner.loop.call_soon_threadsafe(phone.detach)  # the cable comes out
            readings.plugged, readings.charging, readings.amperage_ma = False, False, -850
            for i in range(10):
                stand_in.append(f"TRIAL arm=a trial={i} decode_tps={50 + i}\n")
            assert wait_for(lambda: len(recorded(recording, "trial")) == 10), "fell behind"
            assert wait_for(lambda: len(power(recording, plugged=False)) >= 3), "no readings"
        finally:
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=30)
            runner.run(network.stop())
    assert proc.returncode == 0, err
    assert [e["trial"] for e in recorded(recording, "trial")] == list(range(10))
    # the cable out is no gap of the log over the network (the stand-in serves no DVT: the
    # app's streams have gaps of their own source)
    assert [
        g for g in recorded(recording, "gap") if not g["source"].startswith("pymobiledevice3:app:")
    ] == []
    readings = power(recording)
    assert readings[0]["power_w"] == 4.92 and readings[0]["charging"]
    assert {e["power_w"] for e in power(recording, plugged=False)} == {3.485}
    assert network.connections >= 3  # lockdownd, diagnostics, house_arrest: all over TCP


def power(recording, **only):
    """The power readings (the slower telemetry also has the disk; both are the host's source),
    those whose fields have the values of `only`."""
    readings = [e for e in recorded(recording, "telemetry") if "free_gb" not in e]
    return [e for e in readings if all(e.get(k) == v for k, v in only.items())]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--device", "pymobiledevice3", "--connect", "network"], "network needs --host H"),
        (["--device", "devicectl", "--host", "10.0.0.5"], "need --device pymobiledevice3"),
        (["--device", "pymobiledevice3", "--connect", "usb", "--host", "h"], "--host is for"),
    ],
)
def test_network_options_are_checked_before_anything_starts(argv, message, capsys):
    from anemon.cli import main

    assert main(["watch", *argv, "--bundle", BUNDLE, "--log", LOG, "--headless"]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_power_s_must_be_positive(capsys):
    from anemon.cli import main

    with pytest.raises(SystemExit) as usage:
        main(["watch", "--device", "pymobiledevice3", "--power-s", "0", "--bundle", BUNDLE])
    assert usage.value.code == 2
    assert "not a number of seconds > 0" in capsys.readouterr().err
