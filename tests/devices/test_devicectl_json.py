"""The JSON documents of `xcrun devicectl`: both device layouts, errors, small results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from anemon.devices.devicectl.json import (
    MalformedDocument,
    load,
    parse_devices,
    parse_document,
    parse_installed_bundles,
    parse_launch_pid,
    parse_lock_state,
    parse_processes,
    unwrap,
)

INFO = {
    "arguments": ["devicectl", "list", "devices"],
    "commandType": "devicectl.list.devices",
    "environment": {"TERM": "xterm"},
    "outcome": "success",
    "version": "355.28",
}

OLD_PHONE = {
    "identifier": "33A7E5D2-2A0B-4F1B-9F63-2F1C0B0C1D2E",
    "connectionProperties": {
        "transportType": "wired",
        "tunnelState": "connected",
        "pairingState": "paired",
    },
    "deviceProperties": {
        "name": "Lab iPhone",
        "osVersionNumber": "18.1",
        "osBuildUpdate": "22B83",
        "developerModeStatus": "enabled",
        "ddiServicesAvailable": True,
        "bootState": "booted",
    },
    "hardwareProperties": {
        "udid": "00008120-000A1B2C3D4E5F60",
        "productType": "iPhone15,2",
        "marketingName": "iPhone 14 Pro",
        "platform": "iOS",
        "reality": "physical",
        "internalStorageCapacity": 128000000000,
    },
}
OLD_SIMULATOR = {
    "identifier": "A1B2C3D4-0000-4000-8000-000000000001",
    "deviceProperties": {"name": "iPhone 16 Simulator", "osVersionNumber": "18.2"},
    "hardwareProperties": {
        "udid": "A1B2C3D4-0000-4000-8000-000000000001",
        "platform": "iOS",
        "reality": "simulated",
    },
}
# jsonVersion 5 with --omit-deprecated-fields-in-json: only `properties`, values wrapped.
NEW_PHONE = {
    "identifier": "5E4D3C2B-1A09-4F8E-8D7C-6B5A49382716",
    "properties": {
        "connection": {
            "transportType": "localNetwork",
            "tunnelState": "disconnected",
            "pairingState": "paired",
        },
        "hardware": {
            "udid": {"stringValue": "00008130-00112233445566AA"},
            "productType": "iPhone16,2",
            "marketingName": "iPhone 15 Pro Max",
            "platform": "iOS",
            "reality": {"stringValue": "physical"},
        },
        "software": {
            "osVersionNumber": {"stringValue": "27.0"},
            "osBuildUpdate": {"stringValue": "25A100"},
        },
        "state": {
            "name": {"stringValue": "Wi-Fi iPhone"},
            "developerModeStatus": {"stringValue": "enabled"},
        },
    },
}
NEW_SIMULATOR = {
    "identifier": "5E4D3C2B-0000-4000-8000-000000000002",
    "properties": {
        "hardware": {"reality": {"stringValue": "simulated"}},
        "state": {"name": {"stringValue": "Sim"}},
    },
}


def devices(version: int, *entries: dict) -> list:
    document = {"info": {**INFO, "jsonVersion": version}, "result": {"devices": list(entries)}}
    return parse_devices(parse_document(document))


def test_old_layout_parses_every_field() -> None:
    (phone,) = [d for d in devices(2, OLD_PHONE) if d.physical]
    assert phone.identifier == "33A7E5D2-2A0B-4F1B-9F63-2F1C0B0C1D2E"
    assert phone.udid == "00008120-000A1B2C3D4E5F60"
    assert (phone.name, phone.os_version, phone.os_build) == ("Lab iPhone", "18.1", "22B83")
    assert (phone.product_type, phone.marketing_name) == ("iPhone15,2", "iPhone 14 Pro")
    assert (phone.transport, phone.tunnel_state, phone.pairing_state) == (
        "wired",
        "connected",
        "paired",
    )
    assert phone.developer_mode == "enabled"


def test_json_version_5_properties_with_wrapped_values() -> None:
    (phone,) = devices(5, NEW_PHONE)
    assert phone.udid == "00008130-00112233445566AA"
    assert (phone.name, phone.os_version, phone.os_build) == ("Wi-Fi iPhone", "27.0", "25A100")
    assert phone.reality == "physical" and phone.physical
    assert phone.transport == "localNetwork"


def test_version_5_properties_win_over_the_deprecated_copies() -> None:
    both = {**OLD_PHONE, "properties": {"software": {"osVersionNumber": {"stringValue": "18.1.1"}}}}
    (phone,) = devices(5, both)
    assert phone.os_version == "18.1.1"
    assert phone.name == "Lab iPhone"  # only in the old groups: still found


@pytest.mark.parametrize("version", [2, 5])
def test_simulated_devices_are_marked_for_filtering(version: int) -> None:
    found = devices(version, OLD_PHONE, OLD_SIMULATOR, NEW_PHONE, NEW_SIMULATOR)
    assert [d.name for d in found if d.physical] == ["Lab iPhone", "Wi-Fi iPhone"]


@pytest.mark.parametrize(
    ("wanted", "matches"),
    [
        ("lab iphone", True),
        ("00008120-000a1b2c3d4e5f60", True),
        (OLD_PHONE["identifier"], True),
        ("Lab", False),
    ],
    ids=["name", "udid", "uuid", "part-of-the-name"],
)
def test_device_matches_uuid_udid_or_name_case_insensitively(wanted: str, matches: bool) -> None:
    (phone,) = devices(2, OLD_PHONE)
    assert phone.matches(wanted) is matches


@pytest.mark.parametrize(
    ("wrapped", "value"),
    [
        ({"string": "x"}, "x"),
        ({"url": "file:///a"}, "file:///a"),
        ({"stringValue": "18.2"}, "18.2"),
        ({"intValue": {"stringValue": "3"}}, "3"),
        ({"error": {"code": 1}}, {"error": {"code": 1}}),
        ("plain", "plain"),
    ],
)
def test_unwrap(wrapped: object, value: object) -> None:
    assert unwrap(wrapped) == value


def test_error_chain_with_wrapped_user_info_and_signature() -> None:
    document = parse_document(
        {
            "info": {**INFO, "outcome": "failed", "jsonVersion": 5},
            "error": {
                "code": 10002,
                "domain": "com.apple.dt.CoreDeviceError",
                "errorSignature": "(com.apple.dt.CoreDeviceError 10002)",
                "userInfo": {
                    "NSLocalizedDescription": {"string": "The application failed to launch."},
                    "BundleIdentifier": {"string": "com.example.bench"},
                    "NSUnderlyingError": {
                        "error": {
                            "code": 1,
                            "domain": "FBSOpenApplicationServiceErrorDomain",
                            "userInfo": {
                                "NSLocalizedDescription": {"string": "The request to open failed."},
                                "BSErrorCodeDescription": {"string": "Busy"},
                                "NSUnderlyingError": {
                                    "error": {
                                        "code": 2,
                                        "domain": "NSPOSIXErrorDomain",
                                        "userInfo": {"NSURL": {"url": "file:///x"}},
                                    }
                                },
                            },
                        }
                    },
                },
            },
        }
    )
    assert document.outcome == "failed" and document.json_version == 5
    error = document.error
    assert error is not None
    assert [(e.domain, e.code) for e in error.chain()] == [
        ("com.apple.dt.CoreDeviceError", 10002),
        ("FBSOpenApplicationServiceErrorDomain", 1),
        ("NSPOSIXErrorDomain", 2),
    ]
    assert error.description == "The application failed to launch."
    assert error.signature == "(com.apple.dt.CoreDeviceError 10002)"
    assert error.get("BSErrorCodeDescription") == "Busy"
    assert error.get("NSURL") == "file:///x"
    assert error.get("BundleIdentifier") == "com.example.bench"


def test_launch_pid() -> None:
    launch = parse_document(
        {
            "info": INFO,
            "result": {
                "launchOptions": {"environmentVariables": {"AB_MODEL": "a"}},
                "process": {"processIdentifier": 4242, "executableURL": {"relative": "file:///b"}},
            },
        }
    )
    assert parse_launch_pid(launch) == 4242


def test_installed_bundles() -> None:
    install = parse_document(
        {
            "info": INFO,
            "result": {
                "installedApplications": [
                    {"bundleID": "com.example.bench", "databaseSequenceNumber": 3}
                ]
            },
        }
    )
    assert parse_installed_bundles(install) == ["com.example.bench"]


def test_running_processes_without_a_pid_are_skipped() -> None:
    processes = parse_document(
        {
            "info": INFO,
            "result": {
                "runningProcesses": [
                    {"processIdentifier": 1, "executable": "file:///sbin/launchd"},
                    {"processIdentifier": "bad"},
                    {"processIdentifier": 77, "executable": {"url": "file:///bench.app/bench"}},
                ]
            },
        }
    )
    assert [(p.pid, p.executable) for p in parse_processes(processes)] == [
        (1, "file:///sbin/launchd"),
        (77, "file:///bench.app/bench"),
    ]


def test_lock_state() -> None:
    lock = parse_lock_state(
        parse_document(
            {"info": INFO, "result": {"passcodeRequired": True, "unlockedSinceBoot": False}}
        )
    )
    assert (lock.passcode_required, lock.unlocked_since_boot) == (True, False)


def test_launch_without_pid_is_malformed() -> None:
    with pytest.raises(MalformedDocument):
        parse_launch_pid(parse_document({"info": INFO, "result": {}}))


@pytest.mark.parametrize(
    "content", [None, "45%\n", json.dumps([1, 2])], ids=["missing", "not-json", "not-an-object"]
)
def test_load_rejects_missing_and_non_json_files(tmp_path: Path, content: str | None) -> None:
    path = tmp_path / "document.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(MalformedDocument):
        load(path)
