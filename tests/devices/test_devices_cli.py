"""`anemon devices`: the virtual iPhone, the simulator, and backends that cannot answer."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from anemon.cli import main
from anemon.devices.virtual import VirtualIPhone, usbmuxd
from tests.devices.fake_xcrun import FakeXcrun
from tests.devices.helpers import BUNDLE, TIMEOUT_S, PhoneThread, StandInPhone


@pytest.fixture
def running_phone(monkeypatch: pytest.MonkeyPatch) -> Iterator[VirtualIPhone]:
    with PhoneThread(VirtualIPhone(StandInPhone(), bundles=[BUNDLE])) as phone:
        monkeypatch.setenv("USBMUXD_SOCKET_ADDRESS", phone.usbmux_address)
        yield phone


def run_cli(argv: list[str]) -> int:
    """main() with an overall timeout, so a protocol bug fails instead of hanging."""
    result: list[int] = []
    worker = threading.Thread(target=lambda: result.append(main(argv)), daemon=True)
    worker.start()
    worker.join(TIMEOUT_S)
    assert result, f"anemon {' '.join(argv)} did not finish in {TIMEOUT_S} s"
    return result[0]


def test_json_lists_the_virtual_iphone(
    running_phone: VirtualIPhone, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(["devices", "--backend", "pymobiledevice3", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["backends"] == {"pymobiledevice3": "ok"}
    [device] = document["devices"]
    assert device == {
        "backend": "pymobiledevice3",
        "name": "Virtual iPhone",
        "udid": running_phone.udid,
        "os": "18.5",
        "model": "iPhone16,1",
        "battery_percent": 87.39,  # AppleRawCurrentCapacity / NominalChargeCapacity
        "charging": True,
        "plugged": True,
        "temperature_c": 31.25,
        "power_w": 4.92,  # the charger's 1.2 A x 4.1 V: charging says so
        "free_gb": 38.5,
        "total_gb": 128.0,
        "load_w": None,
        "system_load": "not published: energy needs the battery protocol",
        "error": "",
        "power_note": "",
    }


def test_a_phone_that_publishes_its_system_load_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stand_in = StandInPhone()
    stand_in.readings.power_w = 2.5
    with PhoneThread(VirtualIPhone(stand_in, bundles=[BUNDLE], system_load_s=20)) as phone:
        monkeypatch.setenv("USBMUXD_SOCKET_ADDRESS", phone.usbmux_address)
        assert run_cli(["devices", "--backend", "pymobiledevice3", "--json"]) == 0
        [device] = json.loads(capsys.readouterr().out)["devices"]
        assert run_cli(["devices", "--backend", "pymobiledevice3"]) == 0
        table = " ".join(capsys.readouterr().out.split())
    assert device["load_w"] == 2.5  # the load, while charging: what the phone draws
    # one reading cannot show how often the phone refreshes it
    assert device["system_load"] == "yes, refresh not measured yet (2.50 W now)"
    assert "yes, refresh not measured yet" in table


def test_json_shows_the_power_an_unplugged_phone_draws(
    running_phone: VirtualIPhone, capsys: pytest.CaptureFixture[str]
) -> None:
    readings = running_phone.sim.telemetry()
    readings.plugged, readings.charging, readings.amperage_ma = False, False, -850
    assert run_cli(["devices", "--backend", "pymobiledevice3", "--json"]) == 0
    [device] = json.loads(capsys.readouterr().out)["devices"]
    assert (device["power_w"], device["charging"], device["plugged"]) == (3.485, False, False)


def test_table_shows_the_readings(
    running_phone: VirtualIPhone, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(["devices", "--backend", "pymobiledevice3"]) == 0
    out = capsys.readouterr().out
    texts = ("Virtual iPhone", "87 %", "charging", "31.2 °C", "4.92 W (charger)", "38.5 / 128 GB")
    assert [text for text in texts if text not in out] == []


def test_the_simulator_is_always_there(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["devices", "--backend", "sim", "--json"]) == 0
    [device] = json.loads(capsys.readouterr().out)["devices"]
    assert device["backend"] == "sim" and device["battery_percent"] is not None


def _closed_address() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def test_all_reports_unreachable_backends_instead_of_failing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    address = _closed_address()
    monkeypatch.setenv("USBMUXD_SOCKET_ADDRESS", address)
    monkeypatch.setenv("PATH", "/nonexistent")  # no xcrun
    assert run_cli(["devices", "--json"]) == 0
    backends = json.loads(capsys.readouterr().out)["backends"]
    assert backends["sim"] == "ok"
    assert backends["pymobiledevice3"] == (
        f"unavailable: cannot reach usbmuxd at {address}: is a phone attached / is usbmuxd running?"
    )
    assert backends["devicectl"].startswith("unavailable: ")


def test_a_named_backend_that_cannot_answer_is_one_line_on_stderr(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    address = _closed_address()
    monkeypatch.setenv("USBMUXD_SOCKET_ADDRESS", address)
    assert run_cli(["devices", "--backend", "pymobiledevice3"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"anemon: pymobiledevice3: cannot reach usbmuxd at {address}: "
        "is a phone attached / is usbmuxd running?\n"
    )


def test_devicectl_says_it_cannot_read_power(
    fake_xcrun: FakeXcrun, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(["devices", "--backend", "devicectl", "--json"]) == 0
    [device] = json.loads(capsys.readouterr().out)["devices"]
    assert device["power_w"] is None
    assert device["power_note"] == "not readable with devicectl"
    assert run_cli(["devices", "--backend", "devicectl"]) == 0
    assert "not readable with devicectl" in capsys.readouterr().out


def _shown(width: int) -> str:
    from rich.console import Console

    from anemon.cli.devices import DeviceRow, DevicesTable

    rows = [
        DeviceRow("pymobiledevice3", "Lab iPhone 15 Pro", "00008130-001A2B3C4D5E6F70", "17.5.1",
                  "iPhone16,1", 87.0, True, True, 31.2, 4.921, 38.5, 128.0),
        DeviceRow("devicectl", "Bench phone", "00008110-000E1D2C3B4A5968", "18.0", "iPhone14,2",
                  None, None, None, None, None, None, None,
                  power_note="not readable with devicectl"),
    ]  # fmt: skip
    console = Console(width=width, record=True, color_system=None)
    console.print(DevicesTable(rows))
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= width
    return text


@pytest.mark.parametrize("width", [60, 80, 120])
def test_the_table_never_cuts_a_name_a_udid_or_a_number(width: int) -> None:
    text = _shown(width)
    # a name may be broken in two at a space, never inside a word
    words = text.split()
    whole = ("00008130-001A2B3C4D5E6F70", "00008110-000E1D2C3B4A5968", "Lab", "iPhone", "15",
             "Pro", "Bench", "phone", "4.92")  # fmt: skip
    assert [cell for cell in whole if cell not in words] == []


@pytest.mark.parametrize(
    ("width", "dropped"),
    [
        (60, "backend, OS, battery, charging, temp, disk free"),
        (80, "backend, OS, temp, disk free"),
        (120, "disk free"),
    ],
)
def test_a_narrow_terminal_drops_the_least_important_columns_first_and_says_which(
    width: int, dropped: str
) -> None:
    text = _shown(width)
    said = " ".join(text.split("not shown (too narrow): ")[1].split())
    assert said == dropped
    assert "4.92 W" in text  # power stays longest


def test_a_table_that_fits_drops_nothing() -> None:
    text = _shown(200)
    assert "not shown" not in text and "38.5 / 128 GB" in text


# -- a usbmuxd reply of odd types ---------------------------------------------------------------


def _odd_entry(field: str, value: object) -> Callable[[VirtualIPhone], dict[str, Any]]:
    def attached(phone: VirtualIPhone) -> dict[str, Any]:
        entry = listed(phone)
        entry["Properties"][field] = value
        if value is MISSING:
            del entry["Properties"][field]
        entry.update({"DeviceID": value} if field == "DeviceID" else {})
        return entry

    return attached


listed = usbmuxd._attached
MISSING = object()
BAD_REPLY = "anemon: pymobiledevice3: usbmuxd at {} sent a device list anemon cannot read: "
ADVICE = "; restart usbmuxd, or point USBMUXD_SOCKET_ADDRESS at a real one\n"


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("SerialNumber", 42, "a device's SerialNumber is int 42, not a string"),
        ("ConnectionType", ["USB"], "a device's ConnectionType is list ['USB'], not a string"),
        ("DeviceID", "1", "a device's DeviceID is str '1', not an integer"),
        ("SerialNumber", "", "a device's SerialNumber is empty"),
        ("ConnectionType", MISSING, "a device without 'ConnectionType'"),
    ],
    ids=[
        "an integer SerialNumber",
        "a list ConnectionType",
        "a string DeviceID",
        "no serial",
        "no ConnectionType",
    ],
)
def test_a_device_of_odd_types_refuses_the_reply_in_one_line(
    running_phone: VirtualIPhone,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    field: str,
    value: object,
    said: str,
) -> None:
    monkeypatch.setattr(usbmuxd, "_attached", _odd_entry(field, value))
    assert run_cli(["devices", "--backend", "pymobiledevice3"]) == 1
    captured = capsys.readouterr()
    assert captured.err == BAD_REPLY.format(running_phone.usbmux_address) + said + ADVICE


def test_a_string_device_list_refuses_the_reply_in_one_line(
    running_phone: VirtualIPhone,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    answer = usbmuxd.Usbmuxd._answer

    def odd(self: usbmuxd.Usbmuxd, request: dict[str, Any]) -> list[dict[str, Any]]:
        if request.get("MessageType") == "ListDevices":
            return [{"DeviceList": "iPhone"}]
        return answer(self, request)

    monkeypatch.setattr(usbmuxd.Usbmuxd, "_answer", odd)
    assert run_cli(["devices", "--json"]) == 0  # all: the backend is unavailable, said why
    status = json.loads(capsys.readouterr().out)["backends"]["pymobiledevice3"]
    said = "DeviceList is not a list of devices"
    expected = BAD_REPLY.format(running_phone.usbmux_address) + said + ADVICE
    assert status == "unavailable: " + expected.removeprefix("anemon: pymobiledevice3: ").strip()
