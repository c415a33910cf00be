"""Map a failed `xcrun devicectl` call to a typed DeviceError that says whether to retry.

What devicectl says comes from two places that may each be missing or partial: the JSON
`error` (code, domain, userInfo, NSUnderlyingError chain) and the stderr text. Both are merged
into one `Failure`, then matched loosely: older versions print `error 10002.)`, newer ones
`error 10002 (0x2712))`, and real text uses curly apostrophes (docs/devices.md, "Errors").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from anemon.devices.base import DeviceError, DeviceGone, LaunchRefused
from anemon.devices.devicectl.json import ErrorInfo

CORE_DEVICE = "com.apple.dt.CoreDeviceError"
DEVICE_NOT_FOUND = 1000
NOT_SUPPORTED = 1001
INSTALL_FAILED = (3000, 3002)
LAUNCH_FAILED = 10002
DDI_NOT_MOUNTED = 12040

XCRUN_MISSING = (
    "xcrun not found: devicectl needs Xcode 15+ on macOS; try --device pymobiledevice3 or sim"
)

_CODE = re.compile(r"\(([A-Za-z0-9_.]+) error (-?\d+)(?:\s*\(0x[0-9A-Fa-f]+\))?\.?\)")
_FIELD = re.compile(r"^\s*([A-Za-z_][\w.]*) = (.+?)\s*$", re.MULTILINE)
_QUOTES = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"'})

_GONE = re.compile(r"connection was invalidated|ControlChannelConnectionError", re.I)
_LOCKED = re.compile(r"\blocked\b|could not be, unlocked|\bpasscode\b", re.I)
_SECURITY = re.compile(
    r"\bsecurity\b|invalid code signature|not been explicitly trusted|untrusted developer", re.I
)
_NOT_INSTALLED = re.compile(
    r"not installed|isn't installed|\bNotFound\b|returned nil for|unknown to FrontBoard"
    r"|no (?:such )?app(?:lication)? (?:with|for)",
    re.I,
)
_BUSY = re.compile(r"\bbusy\b|preflight checks", re.I)
_NO_SUCH_FILE = re.compile(r"no such file|does(?: not|n't) exist|couldn't be opened because", re.I)
_MISSING_FILE_CODES = {("NSCocoaErrorDomain", 4), ("NSCocoaErrorDomain", 260)}
_MISSING_FILE_CODES |= {("NSPOSIXErrorDomain", 2)}
_DEVICECTL_MISSING = re.compile(r"unable to find utility \"?devicectl", re.I)

_REASON_KEYS = (
    "NSLocalizedFailureReason",
    "BSErrorCodeDescription",
    "NSLocalizedRecoverySuggestion",
)


class ContainerFileMissing(DeviceError):
    """`copy from`: the file is not in the container (yet): the app has not written it."""


@dataclass(frozen=True, slots=True)
class Failure:
    """Everything a failed call said: the JSON error chain and stderr, merged."""

    command: str
    """The devicectl subcommand, e.g. "device process launch"."""
    codes: tuple[tuple[str, int], ...]
    """(domain, code) pairs, outermost error first."""
    fields: Mapping[str, str]
    """userInfo values and stderr `key = value` lines (the first occurrence wins)."""
    descriptions: tuple[str, ...]
    """The errors' own one-line descriptions, outermost first."""
    text: str
    """All of it as one text, quotes made straight: what the loose patterns search."""

    def has(self, code: int, domain: str = CORE_DEVICE) -> bool:
        return (domain, code) in self.codes

    @property
    def top_code(self) -> int | None:
        return self.codes[0][1] if self.codes else None

    def reason(self) -> str:
        """The device's own words, on one line: descriptions, then failure reasons."""
        parts = list(self.descriptions)
        parts += [self.fields[key] for key in _REASON_KEYS if key in self.fields]
        if self.codes:
            domain, code = self.codes[0]
            parts.insert(0, f"{domain} {code}")
        unique = [part for i, part in enumerate(parts) if part and part not in parts[:i]]
        return " / ".join(unique)[:400] or "no reason given"


def failure(error: ErrorInfo | None, stderr: str, *, command: str) -> Failure:
    """Merge the JSON error (if any) and the stderr text of one failed call."""
    stderr = stderr.translate(_QUOTES)
    codes: list[tuple[str, int]] = []
    fields: dict[str, str] = {}
    descriptions: list[str] = []
    texts: list[str] = []
    for item in error.chain() if error is not None else ():
        if item.code is not None:
            codes.append((item.domain, item.code))
        for key, value in item.user_info:
            fields.setdefault(key, value.translate(_QUOTES))
            texts.append(f"{key} = {value}")
        if item.description:
            descriptions.append(item.description.translate(_QUOTES))
        if item.signature:
            texts.append(item.signature)
    for match in _CODE.finditer(stderr):
        pair = (match.group(1), int(match.group(2)))
        if pair not in codes:
            codes.append(pair)
    for match in _FIELD.finditer(stderr):
        fields.setdefault(match.group(1), match.group(2))
    if not descriptions:
        descriptions = _stderr_descriptions(stderr)
    text = "\n".join([*texts, *descriptions, stderr]).translate(_QUOTES)
    return Failure(command, tuple(codes), fields, tuple(descriptions), text)


def _stderr_descriptions(stderr: str) -> list[str]:
    """The text before each `(domain error N)` of stderr, `ERROR:` stripped."""
    found = []
    for line in stderr.splitlines():
        match = _CODE.search(line)
        if match:
            found.append(line[: match.start()].replace("ERROR:", "").strip())
    if not found:
        found = [line.replace("ERROR:", "").strip() for line in stderr.splitlines() if line.strip()]
    return found[:3]


def to_error(fail: Failure, *, device: str, bundle: str = "", after: str = "") -> DeviceError:
    """The typed error for `fail`. `after` ("an install", "a kill") is what happened since
    the last successful launch: a launch refused for no known reason is then transient."""
    for rule in (_missing_tool, _gone, _not_found, _ddi, _missing_file, _install, _unsupported):
        error = rule(fail, device)
        if error is not None:
            return error
    if fail.has(LAUNCH_FAILED) or fail.command.endswith("process launch"):
        return _launch(fail, bundle, after)
    return DeviceError(
        f"devicectl {fail.command} failed ({fail.reason()})", transient=False, code=fail.top_code
    )


def _missing_tool(fail: Failure, _device: str) -> DeviceError | None:
    if _DEVICECTL_MISSING.search(fail.text):
        return DeviceError(XCRUN_MISSING)
    return None


def _gone(fail: Failure, _device: str) -> DeviceError | None:
    if not _GONE.search(fail.text):
        return None
    return DeviceGone(
        f"the connection to the device was invalidated ({fail.reason()}): "
        "check the cable or network; anemon retries when it is back",
        transient=True,
        code=fail.top_code,
    )


def _not_found(fail: Failure, device: str) -> DeviceError | None:
    if not fail.has(DEVICE_NOT_FOUND):
        return None
    return DeviceGone(
        f"device {device or '(any)'} not found ({fail.reason()}): plug it in, unlock it, trust "
        "this Mac, and check `xcrun devicectl list devices`",
        transient=False,
        code=DEVICE_NOT_FOUND,
    )


def _ddi(fail: Failure, _device: str) -> DeviceError | None:
    if not fail.has(DDI_NOT_MOUNTED):
        return None
    return DeviceError(
        f"the developer disk image could not be mounted ({fail.reason()}): unlock the phone, "
        "turn on Developer Mode, and use an Xcode that supports this iOS version",
        code=DDI_NOT_MOUNTED,
    )


def _missing_file(fail: Failure, _device: str) -> DeviceError | None:
    if not fail.command.endswith("copy from"):
        return None
    if not (set(fail.codes) & _MISSING_FILE_CODES or _NO_SUCH_FILE.search(fail.text)):
        return None
    return ContainerFileMissing(
        f"no such file in the app's container yet ({fail.reason()})",
        transient=True,
        code=fail.top_code,
    )


def _install(fail: Failure, _device: str) -> DeviceError | None:
    code = next((c for c in INSTALL_FAILED if fail.has(c)), None)
    if code is None and not fail.command.endswith("install app"):
        return None
    return DeviceError(
        f"the install failed ({fail.reason()}): check the .app is signed for this device "
        "and that the phone has free space",
        code=code if code is not None else fail.top_code,
    )


def _unsupported(fail: Failure, _device: str) -> DeviceError | None:
    if not fail.has(NOT_SUPPORTED):
        return None
    return DeviceError(
        f"devicectl {fail.command} is not supported by this device ({fail.reason()}): "
        "try --device pymobiledevice3",
        code=NOT_SUPPORTED,
    )


def _launch(fail: Failure, bundle: str, after: str) -> DeviceError:
    """CoreDeviceError 10002 and friends: the reason below it decides."""
    reason = fail.reason()
    code = LAUNCH_FAILED if fail.has(LAUNCH_FAILED) else fail.top_code
    what = f"the launch of {bundle or 'the app'} was refused"
    described = fail.fields.get("BSErrorCodeDescription", "")
    # The reason code first (it is exact), then the loose text.
    for pattern, advice, transient in _LAUNCH_RULES:
        if pattern.search(described) or (not described and pattern.search(fail.text)):
            return LaunchRefused(f"{what} ({reason}): {advice}", transient=transient, code=code)
    if not described and len(fail.codes) <= 1:
        note = f" right after {after}" if after else ""
        return LaunchRefused(
            f"{what}{note} with no reason given ({reason}): transient, launch again shortly",
            transient=True,
            code=code,
        )
    if after:
        return LaunchRefused(
            f"{what} right after {after} ({reason}): transient, launch again shortly",
            transient=True,
            code=code,
        )
    return LaunchRefused(
        f"{what} ({reason}): see the reason; launch it once by hand on the phone",
        transient=False,
        code=code,
    )


_LAUNCH_RULES: tuple[tuple[re.Pattern[str], str, bool], ...] = (
    (_LOCKED, "unlock the phone (and keep it unlocked while the bench runs)", False),
    (
        _SECURITY,
        "trust the developer profile in Settings > General > VPN & Device Management",
        False,
    ),
    (_NOT_INSTALLED, "install the app (app.install in the plan, or from Xcode)", False),
    (
        _BUSY,
        "the device is busy (as it often is after a large install or a kill): launch again later",
        True,
    ),
)
