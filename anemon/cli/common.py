"""Arguments several commands share."""

from __future__ import annotations

import argparse
from pathlib import Path

INTERRUPTED = 130
"""Exit status when the operator stopped a command (Ctrl-C, SIGTERM, the abort key)."""


def add_view_options(parser: argparse.ArgumentParser) -> None:
    """--headless and --layout: every command that shows a dashboard takes them."""
    parser.add_argument(
        "--headless", action="store_true", help="plain progress on the terminal, no dashboard"
    )
    parser.add_argument("--layout", metavar="NAME|PATH", default="default", help="dashboard layout")


def add_record_options(parser: argparse.ArgumentParser) -> None:
    """--record FILE / --no-record: live commands record by default."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--record", metavar="FILE", type=Path, help="where to record the session")
    group.add_argument("--no-record", action="store_true", help="do not record")


def speed(text: str) -> float:
    """A replay or simulator speed: a positive factor, or `max` (as fast as possible)."""
    if text == "max":
        return float("inf")
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a speed: {text!r} (a number > 0, or max)") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"not a speed: {text!r} (a number > 0, or max)")
    return value
