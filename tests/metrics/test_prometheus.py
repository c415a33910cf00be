"""A real Prometheus server scrapes `anemon demo --metrics` on loopback, and anemon's trial
counter is read back through Prometheus's HTTP query API.

Needs Debian's `prometheus` (.ci/run installs it). Without it the test fails under CI
(CI=true: a missing server must not pass as a skip) and skips with the reason elsewhere.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.metrics.live import demo_serving_metrics

pytestmark = pytest.mark.slow
ARM = "minicpm5_1b_ane_pal8"
TIMEOUT_S = 60.0


def prometheus_binary() -> str:
    found = shutil.which("prometheus")
    if found is None:
        why = "the prometheus binary is not installed (Debian: apt-get install prometheus)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{why}; .ci/run should have installed it")
        pytest.skip(why)
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def query(base: str, promql: str) -> list[dict]:
    url = f"{base}/api/v1/query?{urllib.parse.urlencode({'query': promql})}"
    with urllib.request.urlopen(url, timeout=5) as response:
        body = json.load(response)
    assert body["status"] == "success", body
    return list(body["data"]["result"])


def wait_ready(base: str, server: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        assert server.poll() is None, f"prometheus exited: {log.read_text()[-2000:]}"
        try:
            with urllib.request.urlopen(f"{base}/-/ready", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError):
            pass
        time.sleep(0.2)
    pytest.fail(f"prometheus not ready in {TIMEOUT_S:g} s: {log.read_text()[-2000:]}")


def test_prometheus_scrapes_the_trial_counter(tmp_path):
    binary = prometheus_binary()
    with demo_serving_metrics(tmp_path, speed="20") as url:
        target = urllib.parse.urlsplit(url).netloc
        config = tmp_path / "prometheus.yml"
        config.write_text(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
            "scrape_configs:\n  - job_name: anemon\n"
            f"    static_configs:\n      - targets: ['{target}']\n"
        )
        port = free_port()
        log = tmp_path / "prometheus.log"
        with log.open("wb") as out:
            server = subprocess.Popen(
                [binary, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                 f"--web.listen-address=127.0.0.1:{port}"],
                stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip
        base = f"http://127.0.0.1:{port}"
        try:
            wait_ready(base, server, log)
            deadline = time.monotonic() + TIMEOUT_S
            result: list[dict] = []
            while time.monotonic() < deadline:
                result = query(base, f'anemon_trials_total{{arm="{ARM}",device="sim"}}')
                if result and float(result[0]["value"][1]) > 0:
                    break
                time.sleep(0.5)
        finally:
            server.terminate()
            server.wait(timeout=30)
    assert result, f"anemon_trials_total never reached Prometheus: {log.read_text()[-2000:]}"
    series = result[0]["metric"]
    assert series["job"] == "anemon" and series["tag"] == "demo-sustain-1b"
    assert float(result[0]["value"][1]) > 0
