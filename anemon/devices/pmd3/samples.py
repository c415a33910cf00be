"""The bench app's process in DVT's samples: sysmontap rows and graphics dicts as `AppSample`s.

A sysmontap row covers every process (SpringBoard's too): the app's is picked by its pid, and
only its values are decoded (`rows`: hundreds of processes a row on a phone). Its values come
in the order of the attributes asked for (`setConfig:` procAttrs). cpuUsage is %
of one core (None in a process's first sample), physFootprint bytes (GB = 10^9 bytes, what
jetsam counts). A value outside anemon's ranges (parsing/ranges.py: negative memory, 10^6 %
CPU) drops the sample, and a row whose value count is not the attribute count is refused:
both are counted warnings, never a crash.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from anemon.devices.base import AppSample
from anemon.devices.pmd3.keyed_archive import DAMAGE, KeyedArchive, Unreadable
from anemon.parsing.ranges import describe, in_range

GB = 1_000_000_000
PROCESS_ATTRIBUTES = ("pid", "cpuUsage", "physFootprint")
"""What anemon reads of a process row (the phone sends all it was asked for)."""
GPU_KEY = "Device Utilization %"


@dataclass(frozen=True, slots=True)
class Read:
    """What one row gave: the app's sample, or why it was dropped (a counted warning)."""

    sample: AppSample | None = None
    warning: str = ""


NOTHING = Read()


def rows(payload: bytes, pid: int) -> list[Mapping[str, Any]]:
    """A sysmontap message's rows as `process_sample` and `listed` read them, decoded only as
    far as process `pid`: a process row's `Processes` holds `pid`'s values when it lists it, and
    nothing else; a system row is empty. Raises Unreadable (a counted warning)."""
    try:
        archive = KeyedArchive(payload)
        root = archive.fields(archive.root)
        listing = [archive.root] if "NS.keys" in root else archive.uids(root["NS.objects"])
        return [_row(archive, row, pid) for row in listing]
    except DAMAGE as e:
        raise Unreadable(f"{type(e).__name__}: {e}") from None


def _row(archive: KeyedArchive, row: int, pid: int) -> Mapping[str, Any]:
    fields = archive.fields(row)
    keys = [archive.value(key) for key in archive.uids(fields["NS.keys"])]
    if "Processes" not in keys:
        return {}
    processes = archive.fields(archive.uid_at(fields["NS.objects"], keys.index("Processes")))
    wanted = (pid, str(pid))
    for index, key in enumerate(archive.value(uid) for uid in archive.uids(processes["NS.keys"])):
        if key in wanted:  # the pids after it are left unread
            return {
                "Processes": {key: _values(archive, archive.uid_at(processes["NS.objects"], index))}
            }
    return {"Processes": {}}


def _values(archive: KeyedArchive, uid: int) -> Any:
    """A process's values (an archived array), or what stands there instead (`process_sample`
    refuses it); a value that is no number, string or null is None (not a reading)."""
    try:
        listed = archive.fields(uid)
    except Unreadable:
        return archive.value(uid)
    values = []
    for value in archive.uids(listed["NS.objects"]):
        try:
            values.append(archive.value(value))
        except Unreadable:
            values.append(None)
    return values


def process_sample(row: Any, attributes: Sequence[str], pid: int) -> Read:
    """The app's sample in a sysmontap row; NOTHING when the row does not list it."""
    processes = row.get("Processes") if isinstance(row, Mapping) else None
    if not isinstance(processes, Mapping):
        return NOTHING  # a system row, or a row of another type
    values = processes.get(pid, processes.get(str(pid)))
    if values is None:
        return NOTHING
    if not isinstance(values, list | tuple) or len(values) != len(attributes):
        count = len(values) if isinstance(values, list | tuple) else type(values).__name__
        return Read(warning=f"sysmontap: a row with {count} values for {len(attributes)} "
                    "attributes")  # fmt: skip
    named = dict(zip(attributes, values, strict=True))
    cpu = _number(named.get("cpuUsage"))
    footprint = _number(named.get("physFootprint"))
    sample = AppSample(pid, cpu_pct=cpu, mem_gb=None if footprint is None else footprint / GB)
    return _checked(sample)


def listed(row: Any, pid: int) -> bool | None:
    """Whether a sysmontap row lists process `pid` (the phone lists every process it runs);
    None for a row that lists no processes (a system row)."""
    processes = row.get("Processes") if isinstance(row, Mapping) else None
    if not isinstance(processes, Mapping):
        return None
    return pid in processes or str(pid) in processes


def gpu_sample(sample: Any, pid: int | None) -> Read:
    """The GPU's utilisation in a graphics sample; NOTHING without one."""
    gpu = _number(sample.get(GPU_KEY)) if isinstance(sample, Mapping) else None
    return NOTHING if gpu is None else _checked(AppSample(pid, gpu_pct=gpu))


def _checked(sample: AppSample) -> Read:
    for name in ("cpu_pct", "mem_gb", "gpu_pct"):
        value = getattr(sample, name)
        if value is not None and not in_range(name, value):
            return Read(warning=f"absurd {name} {value:g} dropped (expected {describe(name)})")
    return Read(sample)


def _number(value: Any) -> float | None:
    value = getattr(value, "value", value)  # a DTX primitive
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)
