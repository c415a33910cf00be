"""`anemon run PLAN.toml...`: execute bench plans (docs/spec/plan.md) on devices or the simulator.

Several plans run at once, one per device (`feeds.several.SeveralRuns`): one recording each
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
    from anemon.clock import RealClock
    from anemon.control.plan import Plan
    from anemon.feeds.plan import PlanRun
    from anemon.metrics import Exporter
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
    if len(plans) > 1:
        return execute_several(plans, args, args.speed or 1.0, force=args.force)
    with serve_metrics(args) as metrics:
        return execute(plans[0][1], args, args.speed or 1.0, force=args.force, metrics=metrics)


def execute(
    plan: Plan,
    args: argparse.Namespace,
    speed_x: float,
    *,
    force: bool = False,
    metrics: Exporter | None = None,
) -> int:
    """Run `plan` in the dashboard or headless, recorded unless --no-record; the exit status.

    `force`: go on when a check fails (the battery protocol's waits time out). `metrics`:
    the --metrics endpoint, filled from the run (the device labelled by its id, else kind)."""
    from anemon.cli.common import open_recorder, record_mode, recording_note
    from anemon.clock import clock_for
    from anemon.feeds.plan import PlanRun
    from anemon.headless import HeadlessView, make_console, run_headless

    record_mode(args, force_alone=True)  # --append/--force that cannot apply: before anything
    if not args.headless:
        from anemon import ui

        ui.resolve(args.layout or "default")  # a bad layout is a usage error before anything starts
        if math.isinf(speed_x):
            speed_x = DASHBOARD_MAX_SPEED
    # Claimed now (an existing FILE refused before anything starts); the header once the
    # device has answered.
    recorder = open_recorder(args, plan.tag, force_alone=True)
    try:
        feed = PlanRun(
            plan, clock_for(speed_x), record=recorder, force=force, keys=not args.headless
        )
    except BaseException:
        if recorder is not None:
            recorder.close()
        raise
    if metrics is not None:
        metrics.watch(feed.subscribe, plan.device.id or plan.device.kind, plan.tag)
    print(recording_note(recorder), file=sys.stderr)
    view = HeadlessView(make_console())
    ending = run_headless(feed, view) if args.headless else ui.launch(feed, args.layout)
    # The table stays in the terminal's scrollback, for the lab notes.
    view.finish(feed.session, title=feed.title)
    for line in outcome_lines(feed, ending.signal):
        view.console.print(line, markup=False, highlight=False)
    return _exit_status(feed)


def execute_several(
    plans: list[tuple[Path, Plan]],
    args: argparse.Namespace,
    speed_x: float,
    *,
    force: bool = False,
) -> int:
    """Run every plan at once (one device each), in one dashboard or headless; the worst
    exit status of the runs."""
    from anemon.cli.common import open_recorder, record_mode, recording_note
    from anemon.feeds.several import SeveralRuns, check_distinct, label, shared_clocks
    from anemon.headless import HeadlessView, make_console, run_headless_several

    check_distinct(plans)
    if args.record is not None:
        raise AnemonError(
            "--record FILE names one recording: with several plans each run records under its "
            "own default name (or --no-record)"
        )
    record_mode(args, force_alone=True)
    if not args.headless:
        from anemon import ui

        ui.resolve(args.layout or "default")
        if math.isinf(speed_x):
            speed_x = DASHBOARD_MAX_SPEED
    with serve_metrics(args) as metrics:
        runs: list[PlanRun] = []
        try:
            for (_, plan), clock in zip(plans, shared_clocks([speed_x] * len(plans)), strict=True):
                recorder = open_recorder(args, plan.tag, force_alone=True)
                runs.append(_plan_run(plan, clock, recorder, force=force,
                                      keys=not args.headless))  # fmt: skip
        except BaseException:
            for run_ in runs:
                run_.close()
            raise
        several = SeveralRuns(runs, [label(plan) for _, plan in plans])
        console = make_console()
        for feed, name in several.pairs:
            if metrics is not None:
                metrics.watch(feed.subscribe, feed.plan.device.id or name, feed.plan.tag)
            print(f"{printable(name)}: {recording_note(feed.recorder)}", file=sys.stderr)
        if args.headless:
            ending = run_headless_several(several, console)
        else:
            ending = ui.launch_several(several, args.layout)
    view = HeadlessView(console)
    for i, (feed, name) in enumerate(several.pairs):
        view.finish(feed.session, title=f"{printable(name)}: {feed.title}")
        lines = outcome_lines(feed, ending.signal)
        if i in several.errors:
            lines.append(f"failed: {several.errors[i]}")
        for line in lines:
            view.console.print(f"{printable(name)}: {line}", markup=False, highlight=False)
    return worst_status([_exit_status(feed) for feed in several.feeds])


def _plan_run(
    plan: Plan, clock: RealClock, recorder: Recorder | None, *, force: bool, keys: bool
) -> PlanRun:
    """The run of one plan; its claimed recording freed if the run cannot be made."""
    from anemon.feeds.plan import PlanRun

    try:
        return PlanRun(plan, clock, record=recorder, force=force, keys=keys)
    except BaseException:
        if recorder is not None:
            recorder.close()
        raise


def worst_status(statuses: list[int]) -> int:
    """Several runs' exit status: 130 if any was aborted, else 2 if any could not be run as
    given (a k nothing reads), else 1 if any failed, else 0."""
    for status in (130, 2, 1):
        if status in statuses:
            return status
    return max(statuses, default=0)


def outcome_lines(feed: PlanRun, signal: str | None = None) -> list[str]:
    """Which arms did not complete, and why (under the summary table); `signal`: the one
    that stopped the run, if one did."""
    result = feed.result
    if result is None:
        return ["the run did not finish"]
    lines = [f"not completed: {o.describe()}" for o in result.failures]
    if feed.controller.stopped:
        lines.append(feed.controller.stopped)
    if result.skipped:
        lines.append("not run: " + ", ".join(result.skipped))
    if result.aborted:
        lines.append(f"aborted by a signal ({signal})" if signal else "aborted by the operator")
    return lines


def _exit_status(feed: PlanRun) -> int:
    return 1 if feed.result is None else feed.result.exit_status
