"""`anemon run PLAN.toml...`: execute bench plans (docs/spec/plan.md) on devices or the simulator.

Several plans run at once, one per device (`feeds.runs.Runs`): one recording each
(`--record FILE` names one, so it is refused), one dashboard with a tab per device, headless
lines prefixed with the device. Two plans naming the same device: exit 2 before anything starts.
The exit status is then the worst of the runs': 130 if any was aborted, else 2 if any waited
for a k nothing reads, else 1 if any failed.

Exit status: 0 every arm completed; 1 some arm failed or was aborted (the summary says which
and why); 2 the plan or the command line is wrong (nothing started), or headless the battery
protocol waits for a k that nothing reads (the host cannot see the cable; nothing launched,
unless --force goes on at once); 130 the operator aborted
(the abort key, quitting mid-run, SIGINT, SIGTERM or SIGHUP: `PlanRun.stop` aborts the session,
in the dashboard as headless, from the first moments after start-up).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from anemon.cli.common import (
    add_metrics_option,
    add_record_options,
    add_view_options,
    serve_metrics,
    speed,
)
from anemon.devices import DEVICE_KINDS
from anemon.errors import AnemonError
from anemon.text import printable

if TYPE_CHECKING:
    from collections.abc import Iterable

    from anemon.analysis.summary import ArmSummary
    from anemon.control.plan import Plan
    from anemon.feeds.plan import PlanRun
    from anemon.recording.writer import Recorder

DASHBOARD_MAX_SPEED = 600.0
"""`--speed max` under the dashboard: it needs real time, so "max" is a large factor."""


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("run", help="execute a bench plan (TOML)")
    parser.add_argument("plan", type=Path, nargs="+", metavar="PLAN.toml",
                        help="one plan per device; several run at the same time")  # fmt: skip
    parser.add_argument("--device", choices=DEVICE_KINDS, help="override the plan's device.kind")
    parser.add_argument(
        "--speed", type=speed, metavar="X|max", help="simulator clock speed, up to 10000"
    )
    parser.add_argument("--force", action="store_true",
                        help="go on when the battery protocol's wait times out (headless, at "
                             "once where only k could end it) or a pre-flight check fails; with "
                             "--record FILE that exists: replace it")  # fmt: skip
    add_view_options(parser)
    add_record_options(parser, force=False)
    add_metrics_option(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from anemon.control.plan import load_plan

    plans = [(path, load_plan(path, args.device)) for path in args.plan]
    for path, plan in plans:
        if args.speed is not None and plan.device.kind != "sim":
            where = f"{path}: " if len(plans) > 1 else ""
            raise AnemonError(f'{where}--speed is for the simulator only (device.kind = "sim")')
    return execute(plans, args, args.speed or 1.0, force=args.force)


def execute(
    plans: list[tuple[Path, Plan]],
    args: argparse.Namespace,
    speed_x: float,
    *,
    force: bool = False,
) -> int:
    """Run every plan at once (one device each; two on one device: exit 2 before anything
    starts), in the dashboard or headless, each recorded unless --no-record; the worst exit
    status of the runs. With several, what is said of a run starts with its device.

    `force`: go on when a check fails (the battery protocol's waits time out). The
    --metrics endpoint is filled from every run (each device labelled by its id, else kind)."""
    from anemon.cli.common import record_mode, recording_note
    from anemon.feeds.runs import Runs, check_distinct, label
    from anemon.headless import HeadlessView, make_console, run_headless

    check_distinct(plans)
    several = len(plans) > 1
    if several and args.record is not None:
        raise AnemonError(
            "--record FILE names one recording: with several plans each run records under its "
            "own default name (or --no-record)"
        )
    record_mode(args, force_alone=True)  # --append/--force that cannot apply: before anything
    if not args.headless:
        from anemon import ui

        ui.resolve(args.layout or "default")  # a bad layout is a usage error before anything starts
        if math.isinf(speed_x):
            speed_x = DASHBOARD_MAX_SPEED
    with serve_metrics(args) as metrics:
        feeds = _plan_runs(plans, args, speed_x, force=force)
        runs = Runs.of(feeds, [label(plan) for _, plan in plans])
        for run, feed in zip(runs, feeds, strict=True):
            if metrics is not None:
                metrics.watch(feed.subscribe, feed.plan.device.id or run.label, feed.plan.tag)
            print(_said(runs.prefix(run), recording_note(feed.recorder)), file=sys.stderr)
        console = make_console()
        ending = run_headless(runs, console) if args.headless else ui.launch(runs, args.layout)
    # The tables stay in the terminal's scrollback, for the lab notes.
    view = HeadlessView(console)
    for run, feed in zip(runs, feeds, strict=True):
        prefix = runs.prefix(run)
        summaries = view.finish(feed.session, title=_said(prefix, feed.title))
        lines = outcome_lines(feed, ending.signal, told=summaries)
        if run in ending.failures:
            lines.append(f"failed: {ending.failures[run]}")
        for line in lines:
            view.console.print(_said(prefix, line), markup=False, highlight=False)
    return worst_status([_exit_status(feed) for feed in feeds])


def _said(prefix: str | None, text: str) -> str:
    """`text` about one run: after its device, when several run."""
    return f"{printable(prefix)}: {text}" if prefix else text


def _plan_runs(
    plans: list[tuple[Path, Plan]], args: argparse.Namespace, speed_x: float, *, force: bool
) -> list[PlanRun]:
    """A run per plan: its recording claimed first (an existing FILE refused before anything
    starts; the header once the device has answered), then the clocks (`shared_clocks`) and
    the runs. What cannot be made frees what was claimed."""
    from anemon.cli.common import open_recorder
    from anemon.feeds.plan import PlanRun
    from anemon.feeds.runs import shared_clocks

    recorders: list[Recorder | None] = []
    feeds: list[PlanRun] = []
    try:
        for _, plan in plans:
            recorders.append(open_recorder(args, plan.tag, force_alone=True))
        clocks = shared_clocks([speed_x] * len(plans))
        for (_, plan), clock, recorder in zip(plans, clocks, recorders, strict=True):
            feeds.append(PlanRun(plan, clock, record=recorder, force=force,
                                 keys=not args.headless))  # fmt: skip
    except BaseException:
        for feed in feeds:
            feed.close()
        for recorder in recorders[len(feeds) :]:
            if recorder is not None:
                recorder.close()  # also when it never began: the claimed name is freed
        raise
    return feeds


def worst_status(statuses: list[int]) -> int:
    """Several runs' exit status: 130 if any was aborted, else 2 if any could not be run as
    given (a k nothing reads), else 1 if any failed, else 0."""
    for status in (130, 2, 1):
        if status in statuses:
            return status
    return max(statuses, default=0)


def outcome_lines(
    feed: PlanRun, signal: str | None = None, told: Iterable[ArmSummary] = ()
) -> list[str]:
    """Which arms did not complete, and why (under the summary table); `signal`: the one
    that stopped the run, if one did. A launch whose end the table's footnote already says
    (`told`: its summaries; the footnote gives an arm's last round: "a aborted: the operator
    aborted the arm") is not said again."""
    result = feed.result
    if result is None:
        return ["the run did not finish"]
    said = {(s.arm, s.status, s.status_reason or "") for s in told}
    last = {o.arm: o for o in result.outcomes}  # each arm's last launch
    lines = [
        f"not completed: {o.describe()}"
        for o in result.failures
        if not (last[o.arm] is o and (o.arm, o.status, o.reason) in said)
    ]
    if feed.controller.stopped:
        lines.append(feed.controller.stopped)
    if result.skipped:
        lines.append("not run: " + ", ".join(result.skipped))
    if result.aborted:
        lines.append(f"aborted by a signal ({signal})" if signal else "aborted by the operator")
    return lines


def _exit_status(feed: PlanRun) -> int:
    return 1 if feed.result is None else feed.result.exit_status
