"""The crash and jetsam reports on the phone that name the bench app, for pre-flight
(`Pmd3Device.reports`): `com.apple.crashreportcopymobile`'s CrashReporter folder, each `.ips` at
its root newer than a given time read and kept when it names the app (devices/reports.py: its
own crash, or a JetsamEvent where it is the killed or largest process, found by its
executable's name since no pid of it is known before a run).

Only the reports newer than the time are read: a phone keeps dozens, and each takes a round
trip per read. A report that is not JSON is passed over (it names nobody anemon can tell).
"""

from __future__ import annotations

from typing import Any

from anemon.devices import reports


async def app_reports(
    provider: Any, bundle: str, executable: str, since: float | None
) -> list[tuple[str, float]]:
    """The reports naming the app (`bundle`, its process `executable`), each one's file name
    and modification time (epoch seconds), written after `since` (None: all of them)."""
    from pymobiledevice3.services.crash_reports import CrashReportsManager

    found: list[tuple[str, float]] = []
    async with CrashReportsManager(provider) as manager:
        for path in await manager.ls("/"):
            name = path.rsplit("/", 1)[-1]
            if not name.endswith(".ips"):
                continue
            stat = await manager.afc.stat(path)
            if stat.get("st_ifmt") != "S_IFREG":
                continue
            written = float(stat["st_mtime"].timestamp())
            if since is not None and written <= since:
                continue
            data = await manager.afc.get_file_contents(path)
            try:
                crash = reports.app_crash(name, data, bundle=bundle, executable=executable)
            except reports.NotAReport:
                continue
            if crash is not None:
                found.append((name, written))
    return found
