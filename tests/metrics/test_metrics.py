"""--metrics: the listener's arithmetic, the endpoint's rules, and a scrape of a live run."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anemon.cli import main
from anemon.events import (
    CooldownEvent,
    ErrorEvent,
    PhaseEvent,
    StartEvent,
    TelemetryEvent,
    TrialEvent,
)
from anemon.metrics import (
    METRIC_NAMES,
    PROCESS_GAUGES,
    Address,
    Exporter,
    FeedMetrics,
    parse_address,
)
from tests.metrics.live import demo_serving_metrics, sample_value, scrape_until

ARM = "minicpm5_1b_ane_pal8"


def value(metrics: FeedMetrics, name: str, arm: str = ARM, **extra: str) -> float | None:
    labels = {"device": metrics.device, "tag": metrics.tag, "arm": arm, **extra}
    return metrics.registry.get_sample_value(name, labels)


def trial(t: float, *, warmup: bool = False, decode: float = 50.0, gen: int = 256) -> TrialEvent:
    return TrialEvent(t=t, wall=t, arm=ARM, tag="tag1", warmup=warmup, decode_tps=decode,
                      prompt_tps=900.0, gen=gen, thermal=2, battery=80.0)  # fmt: skip


def test_trials_set_the_gauges_and_count_timed_trials_and_tokens():
    metrics = FeedMetrics("phone-1")
    metrics(StartEvent(t=0, wall=0, arm=ARM, tag="tag1", free_gb=40.0))
    metrics(trial(1, warmup=True, decode=10.0))
    metrics(trial(2, decode=55.5))
    metrics(trial(3, decode=52.0, gen=128))
    assert metrics.tag == "tag1"  # from the START: the feed had none
    assert value(metrics, "anemon_decode_tps") == 52.0
    assert value(metrics, "anemon_prefill_tps") == 900.0
    assert value(metrics, "anemon_trials_total") == 2  # the warmup is not counted
    assert value(metrics, "anemon_tokens_total") == 256 + 128
    assert value(metrics, "anemon_thermal_state") == 2
    assert value(metrics, "anemon_battery_percent") == 80.0
    assert value(metrics, "anemon_free_disk_gb") == 40.0


def test_telemetry_errors_and_the_phase_series():
    metrics = FeedMetrics("sim", "tag1")
    metrics(TelemetryEvent(t=1, wall=1, arm=ARM, power_w=4.25, battery=77.0, free_gb=12.5))
    metrics(ErrorEvent(t=2, wall=2, arm=ARM, message="boom"))
    metrics(ErrorEvent(t=3, wall=3, arm=ARM, message="again"))
    metrics(PhaseEvent(t=4, wall=4, arm=ARM, phase="running"))
    metrics(PhaseEvent(t=5, wall=5, arm=ARM, phase="cooling"))
    assert value(metrics, "anemon_power_watts") == 4.25
    assert value(metrics, "anemon_battery_percent") == 77.0
    assert value(metrics, "anemon_errors_total") == 2
    assert value(metrics, "anemon_phase_info", phase="cooling") == 1
    assert value(metrics, "anemon_phase_info", phase="running") is None  # one phase at a time
    metrics(PhaseEvent(t=6, wall=6, phase="done"))
    assert value(metrics, "anemon_phase_info", arm="", phase="done") == 1
    assert value(metrics, "anemon_phase_info", phase="cooling") is None


def test_the_apps_process_readings_set_their_gauges_and_a_missing_one_stays_unset():
    metrics = FeedMetrics("phone-1", "tag1")
    metrics(TelemetryEvent(t=1, wall=1, arm=ARM, pid=412, mem_gb=1.93, cpu_pct=None,
                           gpu_pct=7.0))  # fmt: skip
    assert value(metrics, "anemon_app_memory_gb") == 1.93
    assert value(metrics, "anemon_gpu_percent") == 7.0
    assert value(metrics, "anemon_app_cpu_percent") is None  # a first sample: no CPU, never 0
    metrics(TelemetryEvent(t=2, wall=2, arm=ARM, pid=412, cpu_pct=85.5))
    assert value(metrics, "anemon_app_cpu_percent") == 85.5


def cooldown(elapsed: float, thermal: int | None, *, done: bool = False, until: str = "fair"):
    return CooldownEvent(t=elapsed, wall=elapsed, arm=ARM, elapsed_s=elapsed, min_s=60.0,
                         cap_s=300.0, until=until, thermal=thermal, done=done)  # fmt: skip


@pytest.mark.parametrize(
    ("event", "remaining"),
    [
        (cooldown(20, 2), 280.0),  # too warm: up to the cap
        (cooldown(20, 1), 40.0),  # cool enough: the minimum is what is left
        (cooldown(20, None, until="none"), 40.0),  # timed alone
        (cooldown(90, 1), 0.0),  # past the minimum and cool: nothing left
        (cooldown(100, 3, done=True), 0.0),
    ],
)
def test_cooldown_remaining(event, remaining):
    metrics = FeedMetrics("sim", "tag1")
    metrics(event)
    assert value(metrics, "anemon_cooldown_remaining_seconds") == remaining


def test_a_phase_after_the_cooldown_zeroes_what_it_had_left():
    metrics = FeedMetrics("sim", "tag1")
    metrics(cooldown(20, 3))
    metrics(PhaseEvent(t=30, wall=30, arm=ARM, phase="launching"))
    assert value(metrics, "anemon_cooldown_remaining_seconds") == 0


def test_label_values_from_the_log_are_printable():
    metrics = FeedMetrics("sim", "tag1")
    metrics(TrialEvent(t=1, wall=1, arm="evil\x1b[2J", decode_tps=1.0))
    assert value(metrics, "anemon_decode_tps", arm="evil\\x1b[2J") == 1.0


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("127.0.0.1:9464", Address("127.0.0.1", 9464)),
        ("9464", Address("127.0.0.1", 9464)),
        (":0", Address("127.0.0.1", 0)),
        ("[::1]:9464", Address("::1", 9464)),
        ("lab-host:80", Address("lab-host", 80)),
    ],
)
def test_parse_address(text, address):
    assert parse_address(text) == address


@pytest.mark.parametrize(
    "text", ["", "host:", "host:x", "host:65536", "::1:80", "a/b:1", "h:-1", "[::1:80"]
)
def test_bad_addresses_are_refused(text):
    with pytest.raises(ValueError):
        parse_address(text)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_parse_address_gives_an_address_or_a_value_error(text):
    try:
        address = parse_address(text)
    except ValueError:
        return
    assert 0 <= address.port <= 65535 and address.host


def test_a_bad_metrics_option_is_one_line_and_exit_2(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["demo", "--headless", "--no-record", "--metrics", "nowhere:port"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "--metrics" in err and "HOST:PORT" in err and len(err.strip().splitlines()) == 1


def test_a_port_in_use_is_one_line_and_exit_2(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    taken = Exporter(Address("127.0.0.1", 0))
    try:
        status = main(["demo", "--headless", "--no-record", "--speed", "max",
                       "--metrics", f"127.0.0.1:{taken.server.port}"])  # fmt: skip
    finally:
        taken.close()
    assert status == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot serve there" in err[0], err
    assert not (tmp_path / "anemon-recordings").exists()  # nothing started


def test_the_endpoint_is_read_only_and_only_at_metrics():
    exporter = Exporter(Address("127.0.0.1", 0))
    base = exporter.server.url.removesuffix("/metrics")
    try:
        with urllib.request.urlopen(exporter.server.url + "?name[]=x", timeout=5) as ok:
            assert ok.status == 200
        refused = [("/", "GET", 404), ("/../etc/passwd", "GET", 404),
                   ("/metrics", "POST", 405), ("/metrics", "PUT", 405)]  # fmt: skip
        for path, method, status in refused:
            body = None if method == "GET" else b""
            request = urllib.request.Request(base + path, method=method, data=body)
            with pytest.raises(urllib.error.HTTPError) as error:
                urllib.request.urlopen(request, timeout=5)
            error.value.close()
            assert error.value.code == status, path
    finally:
        exporter.close()


@pytest.mark.slow
def test_a_scrape_during_a_simulator_run(tmp_path):
    """Scraped over HTTP while `anemon demo` runs, parsed with prometheus-client's parser."""
    with demo_serving_metrics(tmp_path) as url:
        families = scrape_until(
            url, lambda f: (sample_value(f, "anemon_trials_total", arm=ARM) or 0) >= 3
        )
    served = {s.name for family in families.values() for s in family.samples}
    unread = {"anemon_errors_total", "anemon_cooldown_remaining_seconds", *PROCESS_GAUGES}
    assert METRIC_NAMES - unread <= served  # the simulator's app gives no DVT readings
    labels = {"device": "sim", "tag": "demo-sustain-1b", "arm": ARM}
    assert (sample_value(families, "anemon_trials_total", **labels) or 0) >= 3
    decode = sample_value(families, "anemon_decode_tps", **labels)
    assert decode is not None and 10 < decode < 200
    assert sample_value(families, "anemon_thermal_state", **labels) in (0, 1, 2, 3)
    assert families["anemon_trials"].type == "counter"
    assert families["anemon_decode_tps"].type == "gauge"
