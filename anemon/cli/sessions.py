"""`anemon sessions [DIR] [--format table|json]`: the recordings in DIR, from their headers and
closing summaries (anemon.recording.index), without reading every event."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from anemon.cli.common import write_stdout
from anemon.events import SUMMARY_VERSION
from anemon.recording.writer import DEFAULT_DIR
from anemon.text import printable

if TYPE_CHECKING:
    from collections.abc import Iterable

    from anemon.recording.index import ArmEntry, Entry, Index, OsChange

FORMATS = ("table", "json")
COLUMNS = ("file", "tag", "date (UTC)", "device", "OS build", "arms", "status", "trials",
           "J/token")  # fmt: skip
_RIGHT = frozenset({"trials", "J/token"})
DROP_ORDER = ("OS build", "device", "date (UTC)", "J/token", "trials", "status", "tag")
"""What a narrow terminal loses first (the file and its arms are never dropped)."""


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("sessions", help="the recordings in a folder, one row each")
    parser.add_argument("directory", nargs="?", type=Path, default=DEFAULT_DIR, metavar="DIR",
                        help=f"the folder of recordings (default {DEFAULT_DIR}/)")  # fmt: skip
    parser.add_argument("--format", choices=FORMATS, default="table")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from anemon.recording.index import build_index

    index = build_index(args.directory)
    if args.format == "json":
        rows = [session_json(entry, index.changes) for entry in index.entries]
        write_stdout(json.dumps(rows, indent=1, ensure_ascii=False, allow_nan=False) + "\n")
    else:
        _print_table(index, args.directory)
    for path, why in index.skipped:
        print(f"anemon: skipped {printable(str(path))}: {printable(why)}", file=sys.stderr)
    for change in index.changes:
        where = printable(str(change.path))
        print(f"anemon: warning: {where}: {printable(change.message())}", file=sys.stderr)
    return 0


def session_json(entry: Entry, changes: Iterable[OsChange]) -> dict[str, object]:
    """The index's object (`entry_json`), its `status` the one `listed_status` gives, with
    each arm's own (`arm_status`: done, failed, aborted, incomplete, as `summary` says)."""
    from anemon.recording.index import entry_json

    return {
        **entry_json(entry, changes),
        "status": listed_status(entry),
        "arm_status": {arm.name: arm.status for arm in entry.arms},
    }


def row_cells(entry: Entry) -> tuple[str, ...]:
    """One row of the table, as text (escaped by the caller); arms one per line."""
    created = entry.created.strftime("%Y-%m-%d %H:%M") if entry.created else "?"
    status = listed_status(entry) or "no summary"
    trials = "" if entry.trials is None else str(entry.trials)
    return (
        entry.path.name,
        entry.tag or "?",
        created,
        entry.device or "?",
        entry.os_build or "?",
        "\n".join(map(arm_line, entry.arms)),
        status,
        trials,
        "\n".join(_j_per_token(arm, entry.summary_version) for arm in entry.arms),
    )


def listed_status(entry: Entry) -> str | None:
    """The session's status as `summary` gives its arms': a run that the operator's abort
    of an arm (`a`) ended wrote "failed" (its exit status, 1, is that of a failure too), but
    when no arm failed and one was aborted, the session was aborted, not failed."""
    ends = {arm.status for arm in entry.arms}
    if entry.status == "failed" and "failed" not in ends and "aborted" in ends:
        return "aborted"
    return entry.status


def arm_line(arm: ArmEntry) -> str:
    """An arm, and how it ended when it failed or was aborted, with why: "a (failed: jetsam:
    per-process-limit ...)", "b (aborted: the operator aborted the arm)"."""
    if arm.status in ("failed", "aborted"):
        return f"{arm.name} ({arm.status}" + (
            f": {arm.status_reason})" if arm.status_reason else ")"
        )
    return arm.name


def _j_per_token(arm: ArmEntry, rules: int | None) -> str:
    """J/token as the closing summary gave it; one made by the energy rules before version 3
    (which read short rounds low) says so."""
    if arm.j_per_token is None:
        return arm.energy_note or "—"
    older = " (v2 rules)" if rules is None or rules < SUMMARY_VERSION else ""
    given = f" {arm.energy_note}" if arm.energy_note else ""  # another tool's: where from
    return f"{arm.j_per_token:.3f}{older}{given}"


def _print_table(index: Index, directory: Path) -> None:
    from rich.text import Text

    from anemon.analysis.render import fit_table
    from anemon.headless import make_console

    console = make_console()
    if not index.entries:
        console.print(Text(f"no recordings in {printable(str(directory))}"))
        return
    rows = [tuple(printable_lines(cell) for cell in row_cells(entry)) for entry in index.entries]
    left = [name for name in COLUMNS if name not in _RIGHT]
    console.print(fit_table(COLUMNS, rows, console.width, DROP_ORDER, left=left))
    for entry in index.entries:
        if entry.note is not None:
            console.print(Text(f"{printable(entry.path.name)}: {entry.note}"), soft_wrap=True)


def printable_lines(cell: str) -> str:
    """Each line of a cell escaped; the line breaks between arms kept."""
    return "\n".join(printable(line) for line in cell.split("\n"))
