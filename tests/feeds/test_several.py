"""Several plan runs side by side through the one lifecycle (issue 12, part 1; issue 22)."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import pytest

from anemon.clock import RealClock, VirtualClock
from anemon.control.plan import parse_plan
from anemon.errors import AnemonError
from anemon.feeds.lifecycle import run_feeds
from anemon.feeds.plan import PlanRun
from anemon.feeds.runs import Runs, check_distinct, shared_clocks
from tests.control.helpers import one_arm


def plan(tag: str, udid: str, kind: str = "sim"):
    text = one_arm(tag, seconds=600, device=f'kind = "{kind}"\nid = "{udid}"')
    return parse_plan(text, f"{tag}.toml")


def two_runs(clocks: list[RealClock]) -> list[PlanRun]:
    pairs = zip((("a", "A"), ("b", "B")), clocks, strict=True)
    return [PlanRun(plan(tag, udid), clock) for (tag, udid), clock in pairs]


def test_at_speed_max_every_run_shares_one_virtual_loop() -> None:
    first, second = shared_clocks([math.inf, math.inf])
    assert isinstance(first, VirtualClock)
    assert not isinstance(second, VirtualClock)
    try:
        first.loop.advance(42.0)
        assert second.now() == first.now() == pytest.approx(42.0)
    finally:
        first.loop.close()
    assert [type(c) for c in shared_clocks([3.0, 3.0])] == [RealClock, RealClock]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (("sim", "X"), ("sim", "x")),
        (("pymobiledevice3", "U1"), ("devicectl", "U1")),
        (("sim", ""), ("sim", "")),
    ],
)
def test_the_same_device_twice_is_refused_naming_both_files(a, b) -> None:
    plans = [(Path("a.toml"), plan("a", a[1], a[0])), (Path("b.toml"), plan("b", b[1], b[0]))]
    with pytest.raises(AnemonError, match=r"a\.toml and b\.toml both run on"):
        check_distinct(plans)


def test_distinct_devices_pass() -> None:
    check_distinct([(Path("a.toml"), plan("a", "A")), (Path("b.toml"), plan("b", "B"))])


def test_a_signal_stops_every_run_and_each_records_its_abort() -> None:
    clocks = shared_clocks([math.inf, math.inf])
    runs = two_runs(clocks)
    several = Runs.of(runs, ["A", "B"])

    async def main() -> None:
        async def operator() -> None:
            await clocks[0].sleep(120.0)  # both arms are running by then
            several.stop("SIGTERM")

        task = asyncio.create_task(operator())
        await run_feeds(several)
        await task

    clocks[0].run(main())
    for run in runs:
        assert run.result is not None and run.result.aborted
        assert run.result.exit_status == 130
        assert run.session.last_t < 600  # stopped mid-arm, not run to its end
    assert several.finished


def test_a_run_that_fails_leaves_the_other_to_finish() -> None:
    clocks = shared_clocks([math.inf, math.inf])
    runs = two_runs(clocks)

    async def refuse() -> None:
        raise AnemonError("no such phone")

    runs[0].device.connect = refuse  # type: ignore[method-assign]
    several = Runs.of(runs, ["A", "B"])
    ending = clocks[0].run(run_feeds(several))
    assert isinstance(ending.failures.get(several.runs[0]), AnemonError)
    assert several.runs[1] not in ending.failures
    assert runs[0].result is None
    assert runs[1].result is not None and runs[1].result.exit_status == 0
