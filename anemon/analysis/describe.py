"""Events in words: the one wording of each event kind, for the headless progress lines and
the dashboard's log panel alike.

Plain text with its control characters escaped (`anemon.text.printable`), never markup, and
the name of a style (rich's) for a view that colours its lines.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from anemon.analysis.render import fmt
from anemon.events import (
    AlertEvent,
    CooldownEvent,
    CrashEvent,
    EndEvent,
    ErrorEvent,
    Event,
    GapEvent,
    LoadEvent,
    MarkerEvent,
    PhaseEvent,
    PreflightEvent,
    ReportEvent,
    ResetEvent,
    StartEvent,
    TextEvent,
    TrialEvent,
    thermal_name,
)
from anemon.text import printable


@dataclass(frozen=True, slots=True)
class Words:
    """An event as a line of text."""

    text: str
    """Plain text, its control characters escaped: never markup."""
    style: str = ""
    """A rich style name ("" for none)."""


def describe(event: Event) -> Words | None:
    """The event in words; None for a kind nobody reads line by line (telemetry, IDLE lines,
    the closing summary, a kind this version does not know)."""
    # by the kind's own class, else a base's: a failed recording is worded as the marker it is
    entry = next((_WORDS[kind] for kind in type(event).__mro__ if kind in _WORDS), None)
    if entry is None:
        return None
    style, words = entry
    return Words(printable(words(event)), style)


def _said(head: str, detail: str) -> str:
    """`head: detail`, or the head alone when there is nothing more to say."""
    return f"{head}: {detail}" if detail else head


def _gap(e: GapEvent) -> str:
    """A gap of the log (the device, the mirror), or of a stream about the app: its source is
    `KIND:app:STREAM` (devices/base.py AppGap), live and, as recorded, after replay."""
    stream = e.source.partition(":app:")[2]
    return _said(f"app {stream} gap {e.state}" if stream else f"gap {e.state}", e.reason)


def _trial(e: TrialEvent) -> str:
    kind = "warm-up" if e.warmup else f"trial {e.trial if e.trial is not None else '?'}"
    return (
        f"{kind:>9}  decode {fmt(e.decode_tps)} tok/s  prefill {fmt(e.prompt_tps, 0)} tok/s  "
        f"{thermal_name(e.thermal) or '—'}  battery {fmt(e.battery, 0)} %"
    )


def _cooldown(e: CooldownEvent) -> str:
    state = f"done ({e.reason})" if e.done else "waiting"
    return (
        f"cooldown {state}: {e.elapsed_s:.0f} s (min {e.min_s:.0f}, cap {e.cap_s:.0f}), "
        f"thermal {thermal_name(e.thermal) or '?'} from {e.basis}, until {e.until}"
    )


def _reset(e: ResetEvent) -> str:
    """Another log, read from its start; or (`read_on`) the same log, changed before what
    was read, read on after its last line read."""
    return _said("same log, read on" if e.read_on else "new log", e.reason)


def _preflight(e: PreflightEvent) -> str:
    """The verdict and the checks that did not pass (their readings are the table's)."""
    names = ", ".join(c.check for c in e.checks if c.status != "pass")
    return _said(f"pre-flight {e.status}", names) + (" (going on: --force)" if e.forced else "")


def _report(e: ReportEvent) -> str:
    """What another tool reported of a round: its tokens, thermal course and energy."""
    thermal = " → ".join(
        thermal_name(x) or "?" for x in (e.thermal_start, e.thermal_peak, e.thermal_end)
    )
    energy = f", {fmt(e.energy_j)} J {e.energy_note}" if e.energy_j is not None else ""
    tokens = f"{e.tokens:,} tokens, " if e.tokens is not None else ""
    return f"{e.tool} reported: {tokens}thermal {thermal}{energy}"


_WORDS: dict[type, tuple[str, Callable[[Any], str]]] = {
    StartEvent: ("bold", lambda e: f"launched ({e.compute or '?'}, free {fmt(e.free_gb)} GB)"),
    LoadEvent: ("", lambda e: f"loaded in {fmt(e.load_s, 2)} s{' (cold)' if e.cold else ''}"),
    TrialEvent: ("", _trial),
    EndEvent: ("bold", lambda e: f"ended: {e.reason or '?'} after {e.trials} trials"),
    ErrorEvent: ("bold red", lambda e: f"ERROR: {e.message}"),
    TextEvent: ("dim", lambda e: e.line),
    PhaseEvent: ("cyan", lambda e: _said(f"phase {e.phase}", e.reason)),
    MarkerEvent: ("magenta", lambda e: f"marker: {e.note}"),
    GapEvent: ("yellow", _gap),
    ResetEvent: ("yellow", _reset),
    CooldownEvent: ("cyan", _cooldown),
    AlertEvent: ("bold yellow", lambda e: f"ALERT {e.alert}: {e.note}"),
    PreflightEvent: ("bold", _preflight),
    ReportEvent: ("", _report),
    CrashEvent: ("bold red", lambda e: _said(f"{e.report.upper()} report {e.file}", e.reason)),
}
"""Each kind's style and words."""
