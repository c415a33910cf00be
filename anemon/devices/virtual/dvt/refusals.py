"""What DVT's process control answers when the phone refuses a launch: the NSError chain a real
phone gives (process control's own error, FrontBoard's open-application error, its reason),
for each refusal the simulator makes (anemon/simulator/faults.py): Busy ("Application failed
preflight checks"), Locked, and the bare CoreDevice 10002 (the launch dies before the app
prints anything, e.g. right after an install)."""

from __future__ import annotations

from anemon.devices.virtual.dvt.wire import NSError
from anemon.simulator import SimLaunchRefused

PROCESS_CONTROL_DOMAIN = "com.apple.dt.deviceprocesscontrolservice"
OPEN_SERVICE_DOMAIN = "FBSOpenApplicationServiceErrorDomain"
OPEN_DOMAIN = "FBSOpenApplicationErrorDomain"
REQUEST_DENIED = 1
LOCKED = 7
NOT_FOUND = 4


def launch_refusal(refused: SimLaunchRefused, bundle: str) -> NSError:
    """The error of a launch of `bundle` the simulator refused."""
    if refused.reason == "Locked":
        reason = f"Unable to launch {bundle} because the device was not, or could not be, unlocked."
        return _wrapped(bundle, reason, LOCKED, "Locked")
    if refused.reason == "Busy":
        reason = ("The request was denied by service delegate (SBMainWorkspace) for reason: "
                  'Busy ("Application failed preflight checks").')  # fmt: skip
        return _wrapped(bundle, reason, REQUEST_DENIED, "Busy")
    reason = f"The operation couldn’t be completed. ({refused})"
    return _wrapped(bundle, reason, REQUEST_DENIED, "RequestDenied")


def not_installed(bundle: str) -> NSError:
    reason = f'Application info provider (FBSApplicationLibrary) returned nil for "{bundle}"'
    return _wrapped(bundle, reason, NOT_FOUND, "NotFound")


def _wrapped(bundle: str, reason: str, code: int, name: str) -> NSError:
    """Process control's error over FrontBoard's, over the reason (`code`, named `name`)."""
    cause = NSError(code, OPEN_DOMAIN, {"NSLocalizedDescription": reason,
                                        "BSErrorCodeDescription": name})  # fmt: skip
    opening = NSError(REQUEST_DENIED, OPEN_SERVICE_DOMAIN, {
        "NSLocalizedDescription": f'The request to open "{bundle}" failed.',
        "NSLocalizedFailureReason": reason,
        "NSUnderlyingError": cause,
    })  # fmt: skip
    return NSError(1, PROCESS_CONTROL_DOMAIN, {
        "NSLocalizedDescription": f"Request to launch {bundle} failed.",
        "NSLocalizedFailureReason": reason,
        "NSUnderlyingError": opening,
    })  # fmt: skip
