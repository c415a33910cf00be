"""Crash and jetsam reports (.ips) as `AppCrash`es: which ones name the bench app, and why.

A report is a JSON header line, then a JSON body. A JetsamEvent (bug_type 298) lists every
process with its resident pages (`rpages`; the footprint is rpages x memoryStatus.pageSize) and
a `reason` on the one it killed: it names the app when the app is the killed or the largest
process. The app is found there by its pid (one anemon launched), else by its executable's
name (`CFBundleExecutable`, what the kernel calls the process: before a launch, or for a
process anemon did not launch, it is the only way). Any other report names the app by its pid,
its bundle id or its process name (the executable's). A report that is not JSON is a
`NotAReport` (the watch counts it), never a crash of anemon.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Any

from anemon.devices.base import AppCrash

GB = 1_000_000_000
JETSAM_BUG_TYPE = "298"
DEFAULT_PAGE = 16_384
"""An arm64 iPhone's page size, when a report does not say it."""
PROCESS_NAME_MAX = 32
"""A jetsam snapshot names a process by its kernel name, at most 2 x MAXCOMLEN bytes: a longer
executable's name is compared on that many."""


class NotAReport(ValueError):
    """The file is not a report anemon can read (not JSON, or not a header and a body)."""


def parse(name: str, data: bytes) -> tuple[dict[str, Any], dict[str, Any]]:
    """The report's header and body. Raises NotAReport."""
    try:
        text = data.decode("utf-8")
        first, _, rest = text.partition("\n")
        header = json.loads(first)
        body = json.loads(rest) if rest.strip() else {}
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise NotAReport(f"crash report {name} is not JSON ({e})") from e
    if not isinstance(header, dict) or not isinstance(body, dict):
        raise NotAReport(f"crash report {name} is not a JSON header and body")
    return header, body


def app_crash(
    name: str, data: bytes, *, bundle: str, pids: Collection[int] = (), executable: str = ""
) -> AppCrash | None:
    """The report as the app's crash, None when it names another process. The app is `bundle`,
    any of `pids`, or a process called `executable` ("": its name is not known). Raises
    NotAReport."""
    header, body = parse(name, data)
    if str(header.get("bug_type")) == JETSAM_BUG_TYPE or name.startswith("JetsamEvent"):
        return _jetsam(name, data, body, pids, executable)
    pid = _int(body.get("pid"))
    process = str(header.get("name") or body.get("procName") or "")
    ours = pid in pids or header.get("bundleID") == bundle or body.get("bundleID") == bundle
    if not ours and not (executable and process == executable):
        return None
    return AppCrash("crash", f"crash: {_exception(body)}", name, process, data, pid=pid)


def _jetsam(
    name: str, data: bytes, body: Mapping[str, Any], pids: Collection[int], executable: str
) -> AppCrash | None:
    processes = [p for p in body.get("processes") or () if isinstance(p, Mapping)]
    app = next((p for p in processes if _int(p.get("pid")) in pids), None)
    if app is None and executable:
        kernel_name = executable[:PROCESS_NAME_MAX]
        app = next((p for p in processes if p.get("name") == kernel_name), None)
    if app is None:
        return None
    process = str(app.get("name") or "")
    killed = app.get("reason")
    if not killed and body.get("largestProcess") != process:
        return None
    status = body.get("memoryStatus")
    page = _int(status.get("pageSize")) if isinstance(status, Mapping) else None
    rpages = _int(app.get("rpages"))
    footprint = None if rpages is None else rpages * (page or DEFAULT_PAGE) / GB
    cause = str(killed) if killed else "largest process"
    at = "" if footprint is None else f" at {footprint:.1f} GB"
    return AppCrash("jetsam", f"jetsam: {cause}{at}", name, process, data,
                    pid=_int(app.get("pid")), footprint_gb=footprint)  # fmt: skip


def _exception(body: Mapping[str, Any]) -> str:
    """ "EXC_CRASH (SIGABRT)", from the report's exception, as far as it says."""
    exception = body.get("exception")
    if not isinstance(exception, Mapping):
        return "the app crashed"
    kind, signal = exception.get("type"), exception.get("signal")
    if kind and signal:
        return f"{kind} ({signal})"
    return str(kind or signal or "the app crashed")


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value
