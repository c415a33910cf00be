"""`anemon preflight PLAN.toml [--device KIND]`: the checks a run makes before its first launch
(docs/spec/cli.md "v2: pre-flight checks"), as a table.

Exit status: 0 every check passed or only warned, 1 a check failed, 2 a bad plan or usage.
Nothing is launched and nothing is recorded.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from anemon.devices import DEVICE_KINDS

if TYPE_CHECKING:
    from anemon.control.plan import Plan
    from anemon.control.preflight import Preflight

FAILED = 1


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("preflight", help="the checks a run makes before its first launch")
    parser.add_argument("plan", type=Path, metavar="PLAN.toml")
    parser.add_argument("--device", choices=DEVICE_KINDS, help="override the plan's device.kind")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from anemon.control.plan import load_plan
    from anemon.headless import make_console, preflight_table

    plan = load_plan(args.plan, args.device)
    import asyncio  # here: `anemon --help` builds this parser without asyncio

    result = asyncio.run(check(plan))
    console = make_console()
    title = f"pre-flight: {plan.tag} on {plan.device.kind}"
    console.print(preflight_table(result.checks, title=title))
    console.print(result.summary(), markup=False, highlight=False)
    return FAILED if result.failed else 0


async def check(plan: Plan) -> Preflight:
    """Connect, check, close: the device as a run would make it (the simulator at its start)."""
    from anemon.clock import RealClock
    from anemon.control.preflight import find_history, run_checks
    from anemon.feeds.plan import make_device
    from anemon.recording.writer import DEFAULT_DIR

    device = make_device(plan, RealClock())
    try:
        history = find_history(plan.tag, [DEFAULT_DIR])
        return await run_checks(plan, device, history=history)
    finally:
        await device.close()
