"""`anemon demo`: the bundled demo plan (two arms, sustained, protocol v2, on battery: the
battery protocol, answered by the simulated operator) on the simulator."""

from __future__ import annotations

import argparse
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from anemon.cli.common import add_metrics_option, add_record_options, add_view_options, speed

if TYPE_CHECKING:
    from anemon.control.plan import Plan

DEMO_SPEED = 30.0
"""A 10-minute arm in ~20 s."""


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("demo", help="run the demo plan on the simulated iPhone")
    parser.add_argument("--speed", type=speed, default=DEMO_SPEED, metavar="X|max",
                        help=f"simulator clock speed, up to 10000 (default {DEMO_SPEED:g})",
                        )  # fmt: skip
    add_view_options(parser)
    add_record_options(parser)
    add_metrics_option(parser)
    parser.set_defaults(handler=run)


def demo_plan() -> Plan:
    """The bundled plan (anemon/data/demo.toml)."""
    from anemon.control.plan import parse_plan

    source = resources.files("anemon") / "data" / "demo.toml"
    return parse_plan(source.read_text(encoding="utf-8"), "demo.toml")


def run(args: argparse.Namespace) -> int:
    from anemon.cli.common import record_mode
    from anemon.cli.run import execute

    record_mode(args)  # here --force only replaces: it needs --record FILE
    return execute([(Path("demo.toml"), demo_plan())], args, args.speed)
