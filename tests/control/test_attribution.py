"""Two arms that give the app one AB_MODEL (issue 21): every line of a launch is its plan arm's,
in the run, its recording and their summaries; a raw log keeps its own arm names."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from anemon.analysis.summary import summarize
from anemon.cli import main
from anemon.control.launch import Attribution
from anemon.devices.sim import SimDevice
from anemon.events import (
    CooldownEvent,
    EndEvent,
    ErrorEvent,
    Event,
    GapEvent,
    IdleEvent,
    PhaseEvent,
    RecordEvent,
    StartEvent,
    TrialEvent,
)
from anemon.pipeline import LineFeed, Pipeline
from anemon.recording.reader import open_source
from anemon.sources.items import LogGap
from anemon.store import Session
from tests.control.helpers import Ran, plan, run_plan

MODEL = "minicpm5_1b_ane_pal8"
GEN = {"short": 32, "long": 128}
"""Each arm's AB_GEN: a trial's `gen` says which launch wrote it."""
TRIALS, ROUNDS = 3, 2


def shared(ab_arm: str | None = None, sim: str = "") -> str:
    """A-B-A-B of two arms with one AB_MODEL; `ab_arm`: what each arm's env sets AB_ARM to
    ("": an app that is not told its arm, so it writes `arm=<AB_MODEL>` as today's apps do)."""
    told = "" if ab_arm is None else f', AB_ARM = "{ab_arm}"'
    arms = "".join(f'[[arms]]\nname = "{name}"\nenv = {{ AB_MODEL = "{MODEL}", '
                   f'AB_GEN = "{gen}"{told} }}\n' for name, gen in GEN.items())  # fmt: skip
    return f"""\
tag = "shared"
[protocol]
kind = "ab"
trials = {TRIALS}
rounds = {ROUNDS}
[cooldown]
min_s = 10
until = "none"
cap_s = 10
{arms}{sim}"""


def written(ran: Ran) -> list[str]:
    """The lines the simulated app wrote to its log on the phone."""
    device = ran.feed.device
    assert isinstance(device, SimDevice)
    files = device.phone.container_files(ran.feed.plan.app.bundle)
    return files[ran.feed.plan.log_path].decode().splitlines()


def recorded(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()[1:]]


def timed(events: list[dict]) -> list[dict]:
    return [e for e in events if e["kind"] == "trial" and not e["warmup"]]


@pytest.mark.parametrize("app", ["told its arm", "writes its AB_MODEL"])
def test_two_arms_with_one_model_are_two_arms_with_their_own_trials(tmp_path, capsys, app):
    record = tmp_path / "run.jsonl"
    ran = run_plan(plan(shared(None if app == "told its arm" else "")), record=record)
    assert [o.status for o in ran.result.outcomes] == ["done"] * 4
    lines = [line for line in written(ran) if line.startswith("TRIAL") and "warmup=0" in line]
    assert len(lines) == 2 * TRIALS * ROUNDS
    expected_arms = set(GEN) if app == "told its arm" else {MODEL}
    assert {line.split()[1].removeprefix("arm=") for line in lines} == expected_arms

    events = recorded(record)
    trials = timed(events)
    assert len(trials) == len(lines)  # every trial written is recorded once
    assert Counter(e["arm"] for e in trials) == {arm: TRIALS * ROUNDS for arm in GEN}
    assert all(e["gen"] == GEN[e["arm"]] for e in trials)  # each by the launch that wrote it
    for kind in ("start", "end"):
        assert Counter(e["arm"] for e in events if e["kind"] == kind) == dict.fromkeys(GEN, 2)
    done = [e["arm"] for e in events if e["kind"] == "phase" and e["phase"] == "done"]
    assert done == [*GEN, *GEN, None]
    (closing,) = [e for e in events if e["kind"] == "summary"]
    assert [a["arm"] for a in closing["arms"]] == list(GEN)

    assert main(["summary", "--format", "json", str(record)]) == 0
    arms = json.loads(capsys.readouterr().out)
    assert [(a["arm"], a["trials"], a["tokens"], len(a["rounds"])) for a in arms] == [
        (arm, TRIALS * ROUNDS, TRIALS * ROUNDS * gen, ROUNDS) for arm, gen in GEN.items()
    ]
    assert all(a["status"] == "done" for a in arms)


def test_anemon_run_records_two_arms_and_a_replay_of_it_shows_them(tmp_path, capsys):
    path, record = tmp_path / "shared.toml", tmp_path / "run.jsonl"
    path.write_text(shared(""))
    argv = ["run", str(path), "--device", "sim", "--speed", "max", "--headless"]
    assert main([*argv, "--record", str(record)]) == 0
    out = capsys.readouterr().out
    assert "short  phase done: short (round 2)" in out and "long  phase done: long" in out
    replayed = Session()
    for event in open_source(record):
        replayed.add(event)
    assert [(s.arm, s.trials, s.tokens) for s in summarize(replayed)] == [
        (arm, TRIALS * ROUNDS, TRIALS * ROUNDS * gen) for arm, gen in GEN.items()
    ]


def test_the_session_and_every_decision_name_the_plan_arm():
    ran = run_plan(plan(shared("")))
    assert set(ran.session.arms) == set(GEN)
    phased = {e.arm for e in ran.of(PhaseEvent) if e.arm is not None}
    cooled = {e.arm for e in ran.of(CooldownEvent)}
    assert phased == set(GEN) and cooled == set(GEN)  # a cooldown before each but the first


def test_a_raw_log_keeps_its_own_arm_names(tmp_path, capsys):
    """`watch`/`replay`/`summary` of a log have no launches: the log's `arm=` is the arm."""
    ran = run_plan(plan(shared("")))
    log = tmp_path / "bench.log"
    log.write_text("\n".join(written(ran)) + "\n")
    assert main(["summary", "--format", "json", str(log)]) == 0
    (arm,) = json.loads(capsys.readouterr().out)
    assert (arm["arm"], arm["trials"], len(arm["rounds"])) == (MODEL, 2 * TRIALS * ROUNDS, 4)


def test_each_arm_gets_its_own_simulator_settings():
    """[sim.arms.<name>] is the arm's, not its AB_MODEL's: one fault, one arm."""
    ran = run_plan(plan(shared(sim='[sim.arms.long]\nfault = "load_error"\n')))
    assert [(o.arm, o.status) for o in ran.result.outcomes] == [
        ("short", "done"), ("long", "failed"), ("short", "done"), ("long", "failed")
    ]  # fmt: skip


def test_an_app_that_fails_before_its_start_after_a_stopped_launch_fails_its_own_arm():
    """The first arm wedges (no END: the stall watchdog stops it); the next, of another
    model and deaf to AB_ARM, exits on a bad AB_GEN before any START: its error is its own,
    at once (not the first-trial watchdog's)."""
    text = f"""\
tag = "t"
[cooldown]
min_s = 10
until = "none"
cap_s = 10
[[arms]]
name = "a"
env = {{ AB_MODEL = "{MODEL}" }}
[[arms]]
name = "b"
env = {{ AB_MODEL = "minicpm5_1b_gpu_int8", AB_GEN = "lots", AB_ARM = "" }}
[sim.arms.a]
fault = "stall"
fault_at_s = 5
"""
    ran = run_plan(plan(text))
    assert [(o.arm, o.status) for o in ran.result.outcomes] == [("a", "failed"), ("b", "failed")]
    assert "bad AB_GEN='lots'" in ran.outcome("b").reason
    assert [e.arm for e in ran.of(ErrorEvent) if "AB_GEN" in e.message] == ["b"]


# -- the rule, line by line ------------------------------------------------------------------


def start(arm: str | None = MODEL) -> StartEvent:
    return StartEvent(t=0, wall=0, arm=arm)


def trial(arm: str | None = MODEL) -> TrialEvent:
    return TrialEvent(t=0, wall=0, arm=arm)


def end(arm: str | None = MODEL) -> EndEvent:
    return EndEvent(t=0, wall=0, arm=arm, reason="done")


def arms(attribution: Attribution, *steps: str | RecordEvent) -> list[str | None]:
    """The arm of each line; a string step launches that arm (`name` or `name:AB_MODEL`)."""
    named: list[str | None] = []
    for step in steps:
        if isinstance(step, str):
            name, _, model = step.partition(":")
            attribution.launched(name, {"AB_ARM": name, "AB_MODEL": model or MODEL})
        else:
            named.append(attribution.arm_of(step))
    return named


def test_before_any_launch_a_line_keeps_its_own_arm():
    assert arms(Attribution(), trial("old"), end("old")) == ["old", "old"]


def test_the_previous_launchs_last_lines_stay_its_own_until_the_new_start():
    """A stopped launch's log is pulled late: its tail comes after the next launch began."""
    lines = arms(Attribution(), "a", start(), trial(), "b", trial(), trial(), start(), trial())
    assert lines == ["a", "a", "a", "a", "b", "b"]


def test_after_an_end_the_next_launchs_lines_are_its_own_before_any_start():
    """An app that fails before its START (a bad environment) still fails its own arm."""
    error = ErrorEvent(t=0, wall=0, arm=MODEL, message="bad AB_GEN")
    lines = arms(Attribution(), "a", start(), end(), "b", error, end())
    assert lines == ["a", "a", "b", "b"]


def test_a_line_that_names_only_the_new_launch_is_its_own_before_its_start():
    """A stopped launch (no END) then one that fails before its START: an app told other
    AB_MODELs says which wrote what; with one AB_MODEL, only the START could."""
    error = ErrorEvent(t=0, wall=0, arm="m2", message="bad AB_GEN")
    steps = ("a:m1", start("m1"), trial("m1"), "b:m2", trial("m1"), error, end("m2"))
    assert arms(Attribution(), *steps) == ["a", "a", "a", "b", "b"]
    told = ErrorEvent(t=0, wall=0, arm="b", message="bad AB_GEN")  # it wrote its AB_ARM
    assert arms(Attribution(), "a", start(), trial(), "b", told) == ["a", "a", "b"]


def test_lines_between_launches_belong_to_the_last_one():
    idle = IdleEvent(t=0, wall=0, arm=None)  # the cooldown's probe: no arm of its own
    lines = arms(Attribution(), "a", start(), end(), idle, "b", start("anything"), trial(None))
    assert lines == ["a", "a", "a", "b", "b"]


def test_the_line_feed_names_lines_and_gaps_by_the_attribution():
    events: list[Event] = []
    pipeline = Pipeline()
    pipeline.subscribe(events.append)
    attribution = Attribution()
    feed = LineFeed(pipeline, "sim:log", attribution.arm_of)
    attribution.launched("short", {"AB_ARM": "short", "AB_MODEL": MODEL})
    feed.feed_items([f"START arm={MODEL}", LogGap("begin", "unplugged"), "plain text"])
    assert [(type(e), e.arm) for e in events] == [
        (StartEvent, "short"), (GapEvent, "short"), (type(events[2]), "short")
    ]  # fmt: skip
    assert events[0].line == f"START arm={MODEL}"  # the line itself is kept as it came


def test_the_preflight_warns_of_arms_that_share_an_ab_model(tmp_path, capsys):
    path = tmp_path / "shared.toml"
    path.write_text(shared())
    assert main(["preflight", str(path)]) == 0  # a warning: the run goes on
    out = capsys.readouterr().out
    assert "arms: short, long stay apart in this run (by launch)" in out
    assert "unless the app writes arm=$AB_ARM" in out
