"""Regenerate the sample recordings from the simulator: `python recordings/regenerate.py`.

Every recording here is synthetic: made by `anemon run --device sim --speed max` on the plans
in plans/ (the header's device is the "Simulated iPhone"). Timestamps are virtual. Each run's
exit status is printed; the script exits 1 when one is not the status its plan is made for
(`EXPECTED`: 0, or 1 for the hang), else 0.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from anemon.cli import main

HERE = Path(__file__).parent
EXPECTED = {"sim-hang-2b": 1}
"""The plans made to fail (the hang's first arm never returns a trial: exit 1); others 0."""


def regenerate(run: Callable[[list[str]], int] = main) -> int:
    wrong = 0
    for plan in sorted((HERE / "plans").glob("*.toml")):
        record = HERE / f"{plan.stem}.jsonl"
        status = run(
            ["run", str(plan), "--headless", "--speed", "max", "--record", str(record), "--force"]
        )
        expected = EXPECTED.get(plan.stem, 0)
        note = "" if status == expected else f" (expected {expected})"
        print(f"{record.name}: exit {status}{note}", file=sys.stderr)
        wrong += status != expected
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(regenerate())
