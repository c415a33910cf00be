"""pymobiledevice3 exceptions as DeviceErrors: one line each that says what to do.

Imports pymobiledevice3 only inside `translate`, which is only called from code that already
talked to it.
"""

from __future__ import annotations

import asyncio

from anemon.devices.base import DeviceError, DeviceGone, LaunchRefused

MOUNT_HINT = "run `pymobiledevice3 mounter auto-mount` (needs Developer Mode on)"
DEV_MODE_HINT = (
    "turn on Developer Mode (Settings > Privacy & Security > Developer Mode), restart the iPhone"
)
TUNNEL_HINT = (
    "iOS 17+ launches need an RSD tunnel: on iOS 17.4+ anemon opens one itself over USB; "
    "on 17.0-17.3 run `sudo pymobiledevice3 remote tunneld`"
)


class UsbmuxdUnreachable(DeviceError):
    """Nothing answers at the usbmuxd address."""


class UsbmuxdSilent(DeviceError):
    """usbmuxd (or the phone's lockdownd over the network) accepts a connection but does not
    answer."""


class UsbmuxdBadReply(DeviceError):
    """usbmuxd lists a device anemon cannot read (a field missing or of the wrong type)."""


class NoDevice(DeviceGone):
    """usbmuxd answers but lists no (matching) iPhone."""


class AppNotInstalled(DeviceError):
    """house_arrest does not know the bundle."""


class DeveloperToolsMissing(DeviceError):
    """DVT is out of reach: Developer Mode, the developer disk image or a tunnel is missing."""


class PairingNeeded(DeviceError):
    """The Mac is not (yet) trusted by the phone, or the phone is locked."""


def usbmux_address_label(address: str | None) -> str:
    import os

    return address or os.environ.get("USBMUXD_SOCKET_ADDRESS") or "/var/run/usbmuxd"


def is_gone(e: BaseException) -> bool:
    """A dropped device or connection: reconnect (docs/devices.md, pymobiledevice3 "Errors")."""
    from pymobiledevice3 import exceptions as x

    gone = (
        x.NoDeviceConnectedError,
        x.DeviceNotFoundError,
        x.ConnectionTerminatedError,
        x.MuxException,
        asyncio.IncompleteReadError,
        ConnectionError,
        EOFError,
    )
    if isinstance(e, x.ConnectionFailedToUsbmuxdError):
        return False
    return isinstance(e, gone) or (isinstance(e, OSError) and not isinstance(e, x.AfcException))


def translate(
    e: BaseException,
    *,
    address: str | None = None,
    udid: str | None = None,
    bundle: str | None = None,
    product_version: str = "",
    host: str | None = None,
) -> DeviceError:
    """The DeviceError a user sees for a pymobiledevice3 (or transport) exception; `host`:
    the phone is reached over the network at that address, not through usbmuxd."""
    from pymobiledevice3 import exceptions as x

    if isinstance(e, DeviceError):
        return e
    if isinstance(e, x.ConnectionFailedToUsbmuxdError):
        where = usbmux_address_label(address)
        return UsbmuxdUnreachable(
            f"cannot reach usbmuxd at {where}: is a phone attached / is usbmuxd running?",
            transient=True,
        )
    if isinstance(e, x.NoDeviceConnectedError):
        return NoDevice("no iPhone attached", transient=True)
    if isinstance(e, x.DeviceNotFoundError):
        which = f"the iPhone {udid}" if udid else "the iPhone"
        return NoDevice(f"{which} is not attached", transient=True)
    if isinstance(e, x.AppNotInstalledError):
        return AppNotInstalled(f"the app {bundle} is not installed (or not development-signed)")
    if isinstance(e, x.DeveloperModeIsNotEnabledError):
        return DeveloperToolsMissing(f"Developer Mode is off: {DEV_MODE_HINT}")
    if isinstance(e, x.NotMountedError | x.DeveloperDiskImageNotFoundError):
        return DeveloperToolsMissing(f"the developer disk image is not mounted: {MOUNT_HINT}")
    no_tunnel = x.RSDRequiredError | x.UserspaceTunnelUnavailableError | x.TunneldConnectionError
    if isinstance(e, no_tunnel):
        return DeveloperToolsMissing(f"no tunnel to the iPhone: {TUNNEL_HINT}")
    if isinstance(e, x.InvalidServiceError):
        return _invalid_service(product_version)
    if isinstance(e, x.PasswordRequiredError | x.PasscodeRequiredError):
        return PairingNeeded("the iPhone is locked: unlock it and try again", transient=True)
    if isinstance(e, x.PairingDialogResponsePendingError):
        return PairingNeeded("tap Trust on the iPhone, then try again", transient=True)
    if isinstance(e, x.UserDeniedPairingError):
        return PairingNeeded(
            "the iPhone refused to trust this computer: unplug, replug and tap Trust"
        )
    if isinstance(e, x.NotPairedError | x.PairingError | x.InvalidHostIDError):
        return PairingNeeded(
            "this computer is not paired with the iPhone: unlock it and run "
            "`pymobiledevice3 lockdown pair`"
        )
    if isinstance(e, x.AppInstallError):
        return DeviceError(f"install failed: {e}")
    if (said := _ns_error(e)) is not None:
        return DeviceError(f"the iPhone refused: {said}")
    if is_gone(e):
        if host:
            return DeviceGone(
                f"cannot reach the iPhone at {host} (off the network, or asleep?)", transient=True
            )
        return DeviceGone("the iPhone went away (unplugged?)", transient=True)
    return DeviceError(f"pymobiledevice3: {type(e).__name__}: {e}".rstrip(": "))


def _invalid_service(product_version: str) -> DeviceError:
    major = ios_major(product_version)
    if major >= 17:
        return DeveloperToolsMissing(f"the developer services need a tunnel: {TUNNEL_HINT}")
    return DeveloperToolsMissing(
        f"the developer services are not running: {MOUNT_HINT}"
        + (f"; {DEV_MODE_HINT}" if major >= 16 else "")
    )


def _ns_error(e: BaseException) -> str | None:
    """What an NSError from DVT (DTXNsError) says, in its own words; None: not one."""
    from pymobiledevice3.dtx.exceptions import DTXNsError

    if not isinstance(e, DTXNsError):
        return None
    info = getattr(e.error, "user_info", None)
    said = info.get("NSLocalizedDescription") if isinstance(info, dict) else None
    return str(said) if said else str(e)


def launch_refused(e: BaseException, bundle: str) -> DeviceError:
    """A failed DVT launch (a pid of 0 is a bare AssertionError; DTX errors are NSErrors)."""
    if isinstance(e, AssertionError):
        return LaunchRefused(f"the iPhone refused to launch {bundle} (no pid)", transient=True)
    error = getattr(e, "error", None)
    code = getattr(error, "code", None)
    detail = getattr(error, "user_info", None) or str(e)
    return LaunchRefused(
        f"the iPhone refused to launch {bundle}: {detail}",
        transient=True,
        code=code if isinstance(code, int) else None,
    )


def ios_major(version: str) -> int:
    """18 for "18.5"; 0 when unknown."""
    try:
        return int(version.split(".")[0])
    except ValueError:
        return 0
