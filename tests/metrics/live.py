"""A simulator run serving --metrics, as a separate process, for the tests that scrape it."""

from __future__ import annotations

import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families

START_TIMEOUT_S = 30.0
URL = re.compile(r"metrics at (http://\S+/metrics)")


@contextmanager
def demo_serving_metrics(cwd: Path, speed: str = "50") -> Iterator[str]:
    """`anemon demo --headless --metrics 127.0.0.1:0` running; yields its /metrics URL (read
    from the line it says on stderr). Stopped (SIGTERM) after."""
    process = subprocess.Popen(
        [sys.executable, "-m", "anemon", "demo", "--headless", "--speed", speed, "--no-record",
         "--metrics", "127.0.0.1:0"],
        cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stderr is not None
        first = process.stderr.readline()
        match = URL.search(first)
        assert match, f"no metrics URL in {first!r}"
        yield match.group(1)
    finally:
        process.terminate()
        process.communicate(timeout=START_TIMEOUT_S)


def scrape(url: str) -> dict[str, Metric]:
    """One scrape, parsed with prometheus-client's own parser, by family name."""
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    return {family.name: family for family in text_string_to_metric_families(text)}


def scrape_until(
    url: str, ready: Callable[[dict[str, Metric]], bool], timeout: float = START_TIMEOUT_S
) -> dict[str, Metric]:
    """Scrape until `ready(families)` (the run has got that far); the last scrape."""
    deadline = time.monotonic() + timeout
    while True:
        families = scrape(url)
        if ready(families) or time.monotonic() > deadline:
            return families
        time.sleep(0.2)


def sample_value(families: dict[str, Metric], sample: str, **labels: str) -> float | None:
    """The value of the sample named `sample` whose labels include `labels`."""
    for family in families.values():
        for s in family.samples:
            if s.name == sample and labels.items() <= s.labels.items():
                return s.value
    return None
