"""Regenerate the sample recordings from the simulator: `python recordings/regenerate.py`.

Every recording here is synthetic: made by `anemon run --device sim --speed max` on the plans
in plans/ (the header's device is the "Simulated iPhone"). Timestamps are virtual.
"""

from __future__ import annotations

import sys
from pathlib import Path

from anemon.cli import main

HERE = Path(__file__).parent


def regenerate() -> int:
    worst = 0
    for plan in sorted((HERE / "plans").glob("*.toml")):
        record = HERE / f"{plan.stem}.jsonl"
        status = main(
            ["run", str(plan), "--headless", "--speed", "max", "--record", str(record), "--force"]
        )
        print(f"{record.name}: exit {status}", file=sys.stderr)
        worst = max(worst, status)
    return worst


if __name__ == "__main__":
    regenerate()
