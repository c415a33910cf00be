"""The JSON documents `xcrun devicectl -j FILE` writes, parsed into frozen dataclasses.

Two layouts exist (docs/devices.md, "The JSON documents"): the old one (`connectionProperties`,
`deviceProperties`, `hardwareProperties`) and jsonVersion 5, which adds
`properties.{connection,hardware,software,state}` and wraps some values in objects such as
`{"stringValue": "18.2"}`. Fields are looked up by name in the new groups first, then the old
ones, so either layout (or both at once) parses the same. Raw dicts never leave this module.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Keys of the one-key objects that wrap a plain value: userInfo uses {"string": ...} and
# {"url": ...}; jsonVersion 5 uses {"stringValue": ...}, {"intValue": ...} and the like.
_WRAPPERS = frozenset({"string", "url", "number", "bool", "int", "double", "date", "value"})

_NEW_GROUPS = ("connection", "hardware", "software", "state")
_OLD_GROUPS = ("connectionProperties", "deviceProperties", "hardwareProperties")


class MalformedDocument(ValueError):
    """The JSON file is missing, not JSON, or not the shape devicectl documents."""


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """One NSError of devicectl's `error` object; `underlying` is its NSUnderlyingError."""

    code: int | None
    domain: str
    description: str
    """NSLocalizedDescription, or "" when absent."""
    user_info: tuple[tuple[str, str], ...]
    """Every plain (unwrapped) userInfo value as text, NSUnderlyingError excepted."""
    underlying: ErrorInfo | None = None
    signature: str = ""
    """`errorSignature` (newer versions), e.g. "(com.apple.dt.CoreDeviceError 24004)"."""

    def chain(self) -> Iterator[ErrorInfo]:
        """This error, then each underlying error, outermost first."""
        error: ErrorInfo | None = self
        while error is not None:
            yield error
            error = error.underlying

    def get(self, key: str) -> str | None:
        """The first value of userInfo `key` along the chain."""
        for error in self.chain():
            for name, value in error.user_info:
                if name == key:
                    return value
        return None


@dataclass(frozen=True, slots=True)
class Document:
    """The envelope of every devicectl JSON document."""

    outcome: str
    """"success" or "failed" ("" when the document does not say)."""
    json_version: int | None
    result: Mapping[str, Any]
    error: ErrorInfo | None


@dataclass(frozen=True, slots=True)
class CoreDevice:
    """One entry of `list devices`."""

    identifier: str
    """The CoreDevice UUID (what `--device` is given)."""
    udid: str
    name: str
    os_version: str
    os_build: str
    product_type: str
    marketing_name: str
    platform: str
    reality: str
    """"physical" or "simulated"."""
    transport: str
    """"wired", "localNetwork" or ""."""
    tunnel_state: str
    pairing_state: str
    developer_mode: str

    @property
    def physical(self) -> bool:
        return self.reality != "simulated"

    def matches(self, wanted: str) -> bool:
        """Whether `--device wanted` would name this device (UUID, UDID or name)."""
        ids = (self.identifier.lower(), self.udid.lower(), self.name.lower())
        return wanted.lower() in ids


@dataclass(frozen=True, slots=True)
class RunningProcess:
    """One entry of `device info processes`."""

    pid: int
    executable: str
    """A file URL or path to the executable inside its .app."""


@dataclass(frozen=True, slots=True)
class LockState:
    """`device info lockState`."""

    passcode_required: bool | None
    """True while the phone is locked (a passcode is needed to use it)."""
    unlocked_since_boot: bool | None


def unwrap(value: Any) -> Any:
    """`{"string": "x"}`, `{"stringValue": "x"}` and the like -> "x"; anything else as is."""
    while isinstance(value, dict) and len(value) == 1:
        ((key, inner),) = value.items()
        if key not in _WRAPPERS and not key.endswith("Value"):
            break
        value = inner
    return value


def load(path: Path) -> Document:
    """Read the document devicectl wrote to `path`."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8", errors="replace"))
    except (OSError, json.JSONDecodeError) as e:
        raise MalformedDocument(f"no readable JSON in {path}: {e}") from e
    return parse_document(data)


def parse_document(data: Any) -> Document:
    if not isinstance(data, dict):
        raise MalformedDocument("the JSON document is not an object")
    info = _dict(data.get("info"))
    result = _dict(data.get("result"))
    raw_error = data.get("error")
    error = parse_error(raw_error) if isinstance(raw_error, dict) else None
    if error is not None and not error.signature:
        signature = _text(data.get("errorSignature"))
        if signature:
            error = _with_signature(error, signature)
    return Document(
        outcome=_text(info.get("outcome")),
        json_version=_int(info.get("jsonVersion")),
        result=result,
        error=error,
    )


def parse_error(raw: Mapping[str, Any]) -> ErrorInfo:
    """An NSError as devicectl serialises it, its NSUnderlyingError chain included."""
    user_info = _dict(raw.get("userInfo"))
    underlying_raw = unwrap(user_info.get("NSUnderlyingError"))
    if isinstance(underlying_raw, dict) and isinstance(underlying_raw.get("error"), dict):
        underlying_raw = underlying_raw["error"]  # {"error": {...}} wraps the nested error
    underlying = parse_error(underlying_raw) if isinstance(underlying_raw, dict) else None
    values = tuple(
        (key, _text(unwrap(value)))
        for key, value in user_info.items()
        if key != "NSUnderlyingError" and _is_plain(unwrap(value))
    )
    return ErrorInfo(
        code=_int(raw.get("code")),
        domain=_text(raw.get("domain")),
        description=dict(values).get("NSLocalizedDescription", ""),
        user_info=values,
        underlying=underlying,
        signature=_text(raw.get("errorSignature")),
    )


def parse_devices(document: Document) -> list[CoreDevice]:
    """Every device of `list devices`, simulated ones included (callers filter)."""
    return [_device(raw) for raw in _list(document.result.get("devices"))]


def parse_launch_pid(document: Document) -> int:
    pid = _int(_dict(document.result.get("process")).get("processIdentifier"))
    if pid is None:
        raise MalformedDocument("process launch: no result.process.processIdentifier")
    return pid


def parse_installed_bundles(document: Document) -> list[str]:
    apps = _list(document.result.get("installedApplications"))
    return [_text(unwrap(app.get("bundleID"))) for app in apps]


def parse_app_bundles(document: Document) -> list[str]:
    """The bundle ids `device info apps` lists (`result.apps[].bundleIdentifier`)."""
    apps = _list(document.result.get("apps"))
    return [_text(unwrap(app.get("bundleIdentifier"))) for app in apps]


def parse_processes(document: Document) -> list[RunningProcess]:
    processes = []
    for raw in _list(document.result.get("runningProcesses")):
        pid = _int(raw.get("processIdentifier"))
        if pid is not None:
            processes.append(RunningProcess(pid, _text(unwrap(raw.get("executable")))))
    return processes


def parse_lock_state(document: Document) -> LockState:
    result = document.result
    return LockState(
        passcode_required=_bool(result.get("passcodeRequired")),
        unlocked_since_boot=_bool(result.get("unlockedSinceBoot")),
    )


def _device(raw: Mapping[str, Any]) -> CoreDevice:
    groups = _groups(raw)

    def field(*names: str) -> str:
        for name in names:
            for group in groups:
                if name in group:
                    return _text(unwrap(group[name]))
        return ""

    return CoreDevice(
        identifier=field("identifier"),
        udid=field("udid"),
        name=field("name"),
        os_version=field("osVersionNumber", "osVersion"),
        os_build=field("osBuildUpdate", "osBuild"),
        product_type=field("productType"),
        marketing_name=field("marketingName"),
        platform=field("platform"),
        reality=field("reality"),
        transport=field("transportType"),
        tunnel_state=field("tunnelState"),
        pairing_state=field("pairingState"),
        developer_mode=field("developerModeStatus"),
    )


def _groups(raw: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Where a device's fields live, most authoritative first."""
    properties = _dict(raw.get("properties"))
    groups = [_dict(properties.get(name)) for name in _NEW_GROUPS]
    groups.append(properties)
    groups.extend(_dict(raw.get(name)) for name in _OLD_GROUPS)
    groups.append(raw)
    return groups


def _with_signature(error: ErrorInfo, signature: str) -> ErrorInfo:
    return ErrorInfo(
        error.code, error.domain, error.description, error.user_info, error.underlying, signature
    )


def _is_plain(value: Any) -> bool:
    return isinstance(value, str | int | float | bool)


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Mapping[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _text(value: Any) -> str:
    if value is None or isinstance(value, dict | list):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _int(value: Any) -> int | None:
    value = unwrap(value)
    if isinstance(value, bool):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _bool(value: Any) -> bool | None:
    value = unwrap(value)
    return value if isinstance(value, bool) else None
