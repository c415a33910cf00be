"""devicectl failures -> typed errors, transient or permanent, with the device's reason."""

from __future__ import annotations

import pytest

from anemon.devices.base import DeviceError, DeviceGone, LaunchRefused
from anemon.devices.devicectl.errors import (
    XCRUN_MISSING,
    ContainerFileMissing,
    failure,
    to_error,
)
from anemon.devices.devicectl.json import parse_error

LAUNCH = "device process launch"


def launch_stderr(reason: str = "", failure_reason: str = "", *, hex_code: bool = True) -> str:
    code = "error 10002 (0x2712))" if hex_code else "error 10002.)"
    text = (
        f"ERROR: The application failed to launch. (com.apple.dt.CoreDeviceError {code}\n"
        "         BundleIdentifier = com.example.bench\n"
    )
    if reason:
        text += (
            "       ----------------------------------------\n"
            "       The request to open “com.example.bench” failed. "
            "(FBSOpenApplicationServiceErrorDomain error 1.)\n"
            f"         BSErrorCodeDescription = {reason}\n"
        )
        if failure_reason:
            text += f"         NSLocalizedFailureReason = {failure_reason}\n"
    return text


def from_stderr(stderr: str, command: str = LAUNCH, after: str = "") -> DeviceError:
    fail = failure(None, stderr, command=command)
    return to_error(fail, device="Bench iPhone", bundle="com.example.bench", after=after)


@pytest.mark.parametrize("hex_code", [True, False])
def test_locked_is_permanent_and_says_unlock(hex_code: bool) -> None:
    error = from_stderr(launch_stderr("Locked", hex_code=hex_code))
    assert isinstance(error, LaunchRefused)
    assert not error.transient and error.code == 10002
    assert "unlock the phone" in str(error)
    assert "Locked" in str(error) and "The application failed to launch." in str(error)


def test_security_says_trust_the_developer_profile() -> None:
    reason = "Unable to launch com.example.bench because it has an invalid code signature"
    error = from_stderr(launch_stderr("Security", reason))
    assert isinstance(error, LaunchRefused) and not error.transient
    assert "Settings > General > VPN & Device Management" in str(error)
    assert "invalid code signature" in str(error)


def test_not_installed_with_curly_apostrophes_says_install() -> None:
    stderr = (
        "ERROR: The application couldn’t be launched because it isn’t installed. "
        "(com.apple.dt.CoreDeviceError error 10002 (0x2712))\n"
    )
    error = from_stderr(stderr)
    assert isinstance(error, LaunchRefused) and not error.transient
    assert "install the app" in str(error)
    assert "couldn't be launched" in str(error)  # the device's words, quotes straightened


def test_busy_is_transient() -> None:
    error = from_stderr(launch_stderr("Busy", "Application failed preflight checks"))
    assert isinstance(error, LaunchRefused) and error.transient
    assert "Application failed preflight checks" in str(error)


@pytest.mark.parametrize("after", ["", "an install", "a kill"])
def test_no_reason_is_transient(after: str) -> None:
    error = from_stderr(launch_stderr(hex_code=False), after=after)
    assert isinstance(error, LaunchRefused) and error.transient and error.code == 10002
    assert "no reason" in str(error)
    if after:
        assert f"right after {after}" in str(error)


@pytest.mark.parametrize(
    ("after", "transient"), [("an install", True), ("a kill", True), ("", False)]
)
def test_an_unknown_reason_is_transient_only_right_after_an_install_or_kill(
    after: str, transient: bool
) -> None:
    error = from_stderr(launch_stderr("Denied", "Something new"), after=after)
    assert isinstance(error, LaunchRefused) and error.transient is transient
    assert "Something new" in str(error)


def test_device_not_found() -> None:
    stderr = (
        "ERROR: The specified device was not found. "
        "(com.apple.dt.CoreDeviceError error 1000 (0x3E8))"
    )
    error = from_stderr(stderr, command="device info processes")
    assert isinstance(error, DeviceGone) and not error.transient and error.code == 1000
    assert "Bench iPhone" in str(error) and "was not found" in str(error)


def test_developer_disk_image() -> None:
    stderr = (
        "ERROR: Failed to mount the developer disk image. "
        "(com.apple.dt.CoreDeviceError error 12040.)"
    )
    error = from_stderr(stderr)
    assert type(error) is DeviceError and not error.transient and error.code == 12040
    assert "developer disk image" in str(error) and "Developer Mode" in str(error)


@pytest.mark.parametrize("command", [LAUNCH, "device copy from", "device process terminate"])
def test_connection_invalidated_is_device_gone_and_transient(command: str) -> None:
    stderr = (
        "ERROR: The operation couldn’t be completed. (com.apple.dt.CoreDeviceError error 4.)\n"
        "       ----------------------------------------\n"
        "       Connection was invalidated "
        "(com.apple.dt.RemotePairing.ControlChannelConnectionError error 1 (0x01))\n"
    )
    error = from_stderr(stderr, command=command)
    assert isinstance(error, DeviceGone) and error.transient
    assert "Connection was invalidated" in str(error)


def test_copy_of_a_missing_file() -> None:
    stderr = (
        "ERROR: Failed to copy the file. (com.apple.dt.CoreDeviceError error 7000 (0x1B58))\n"
        "       The file “bench.log” couldn’t be opened because there is no such file. "
        "(NSCocoaErrorDomain error 260 (0x104))\n"
    )
    error = from_stderr(stderr, command="device copy from")
    assert isinstance(error, ContainerFileMissing) and error.transient


def test_devicectl_missing_from_xcode() -> None:
    stderr = 'xcrun: error: unable to find utility "devicectl", not a developer tool or in PATH'
    error = from_stderr(stderr, command="list devices")
    assert str(error) == XCRUN_MISSING and not error.transient


def test_install_failure_is_permanent() -> None:
    stderr = "ERROR: Failed to install the app. (com.apple.dt.CoreDeviceError error 3002.)"
    error = from_stderr(stderr, command="device install app")
    assert type(error) is DeviceError and not error.transient and error.code == 3002
    assert "install failed" in str(error)


def test_unknown_failure_keeps_the_command_and_reason() -> None:
    error = from_stderr(
        "ERROR: Something odd (com.example.Other error 9.)", command="device info apps"
    )
    assert type(error) is DeviceError and not error.transient
    assert "device info apps" in str(error) and "Something odd" in str(error)


def test_json_error_alone_is_enough() -> None:
    error_info = parse_error(
        {
            "code": 10002,
            "domain": "com.apple.dt.CoreDeviceError",
            "userInfo": {
                "NSLocalizedDescription": {"string": "The application failed to launch."},
                "NSUnderlyingError": {
                    "error": {
                        "code": 1,
                        "domain": "FBSOpenApplicationServiceErrorDomain",
                        "userInfo": {
                            "BSErrorCodeDescription": {"string": "Locked"},
                            "NSLocalizedFailureReason": {
                                "string": "the device was not, or could not be, unlocked"
                            },
                        },
                    }
                },
            },
        }
    )
    error = to_error(
        failure(error_info, "", command=LAUNCH), device="d", bundle="com.example.bench"
    )
    assert isinstance(error, LaunchRefused) and not error.transient
    assert "unlock the phone" in str(error) and "could not be, unlocked" in str(error)


def test_message_is_one_line() -> None:
    error = from_stderr(launch_stderr("Busy", "Application failed preflight checks"))
    assert "\n" not in str(error)
