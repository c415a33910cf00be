"""A jetsam's report: what the phone writes when the kernel kills an app over its memory limit.

`JetsamEvent-YYYY-MM-DD-HHMMSS.ips` in the CrashReporter folder: a JSON header line (bug_type
"298", timestamp, os_version, incident_id), then a JSON body listing every process with its
resident pages (`rpages`: the footprint is rpages x memoryStatus.pageSize), `reason` on the one
it killed, and `largestProcess`. osanalyticshelper then logs "Saved type '298(JetsamEvent)'
report (n of max m) at <path>", the line pymobiledevice3's `CrashReportsManager.watch()`
waits for.
"""

from __future__ import annotations

import datetime
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from anemon.simulator.process import Usage

PAGE_SIZE = 16_384
"""An arm64 iPhone's page."""
REASON = "per-process-limit"
MAX_REPORTS = 25
"""What osanalyticshelper keeps of one type (the "max m" of its line)."""
FOLDER = "/private/var/mobile/Library/Logs/CrashReporter"


@dataclass(frozen=True, slots=True)
class JetsamReport:
    name: str
    """The file name, at the CrashReporter folder's root."""
    data: bytes
    log_line: str
    """osanalyticshelper's line announcing it."""


def jetsam_report(
    killed: Usage, others: Sequence[Usage], *, wall_s: float, os_version: str, count: int
) -> JetsamReport:
    """The report of `killed` (the others listed beside it), written at `wall_s` (Unix
    seconds), the `count`-th of its type on the phone."""
    when = datetime.datetime.fromtimestamp(wall_s, tz=datetime.UTC)
    name = f"JetsamEvent-{when:%Y-%m-%d-%H%M%S}.ips"
    incident = str(uuid.uuid5(uuid.NAMESPACE_URL, f"anemon-jetsam:{wall_s}:{killed.pid}")).upper()
    stamp = f"{when:%Y-%m-%d %H:%M:%S}.{when.microsecond // 10_000:02d} +0000"
    header = {"bug_type": "298", "timestamp": stamp, "os_version": os_version,
              "incident_id": incident}  # fmt: skip
    everyone = [killed, *others]
    largest = max(everyone, key=lambda u: u.footprint_bytes)
    body = {
        "incident": incident,
        "date": stamp,
        "memoryStatus": {"pageSize": PAGE_SIZE, "memoryPages": {"free": 42_000}},
        "largestProcess": largest.name,
        "processes": [_process(u, killed=u is killed) for u in everyone],
    }
    data = (json.dumps(header) + "\n" + json.dumps(body, indent=2)).encode()
    line = (f"Saved type '298(JetsamEvent)' report ({count} of max {MAX_REPORTS}) at "
            f"{FOLDER}/{name}")  # fmt: skip
    return JetsamReport(name, data, line)


def _process(usage: Usage, *, killed: bool) -> dict[str, object]:
    entry: dict[str, object] = {
        "name": usage.name,
        "pid": usage.pid,
        "rpages": usage.footprint_bytes // PAGE_SIZE,
        "states": ["frontmost"] if killed else ["daemon"],
    }
    if killed:
        entry["reason"] = REASON
    return entry
