"""Alerts (issue 12 part 3): each condition on the simulator, at most once per arm, the hook
run without a shell (its environment, a failure and a timeout recorded), bad `[alerts]`."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from anemon.cli import main
from anemon.control.alerts import Hook
from anemon.control.plan import PlanError, parse_plan
from anemon.events import AlertEvent, MarkerEvent
from anemon.recording.reader import open_source
from tests.control.helpers import TWO_ARMS, plan, run_plan
from tests.process_table import TIMEOUT_S, in_group, needs_proc, until_exists, until_gone

ANE, GPU = "minicpm5_1b_ane_pal8", "minicpm5_1b_gpu_int8"
SHORT = '[protocol]\nseconds = 120\n[cooldown]\nmin_s = 30\nuntil = "none"\ncap_s = 60\n'


def alerts(ran, kind: str | None = None) -> list[AlertEvent]:
    return [e for e in ran.of(AlertEvent) if kind is None or e.alert == kind]


def test_a_thermal_state_reached_alerts_once_per_arm(tmp_path):
    record = tmp_path / "r.jsonl"
    the_plan = plan(TWO_ARMS, s=SHORT, a='[alerts]\nthermal = "serious"\n',
                    sim='[sim]\nstart_thermal = "serious"\n')  # fmt: skip
    ran = run_plan(the_plan, record=record, force=True)
    fired = alerts(ran, "thermal")
    assert {e.arm for e in fired} == {ANE, GPU} and len(fired) == 2  # many hot trials each
    assert fired[0].value == "serious" and fired[0].threshold == "serious"
    recorded = [e for e in open_source(record) if isinstance(e, AlertEvent)]
    assert [(e.alert, e.arm, e.value) for e in recorded] == [
        (e.alert, e.arm, e.value) for e in fired
    ]


def test_no_alerts_section_no_alerts():
    ran = run_plan(plan(TWO_ARMS, s=SHORT, sim='[sim]\nstart_thermal = "serious"\n'), force=True)
    assert alerts(ran) == []


def test_a_battery_floor_alerts():
    the_plan = plan(TWO_ARMS, s=SHORT, a="[alerts]\nbattery_floor_pct = 99\n",
                    d='[device]\nconnect = "network"\n[sim]\nplugged = false\n')  # fmt: skip
    fired = alerts(run_plan(the_plan), "battery_floor")
    assert fired and all(e.value <= 99 and e.threshold == 99 for e in fired)
    assert len({e.arm for e in fired}) == len(fired)  # once per arm


def test_a_disk_floor_alerts():
    the_plan = plan(
        TWO_ARMS, s=SHORT, a="[alerts]\ndisk_floor_gb = 20\n", sim="[sim]\nfree_gb = 12.0\n"
    )
    fired = alerts(run_plan(the_plan), "disk_floor")
    assert fired and all(e.value <= 20 for e in fired)
    assert len({e.arm for e in fired}) == len(fired)


def test_charging_stopping_mid_arm_alerts():
    unplug = f'[sim.arms.{ANE}]\nfault = "unplug"\nfault_at_s = 40\n'
    the_plan = plan(TWO_ARMS, s=SHORT, a="[alerts]\ncharging_changed = true\n", u=unplug,
                    d='[device]\nconnect = "network"\n')  # fmt: skip
    ran = run_plan(the_plan, battery_prompts=False)
    fired = alerts(ran, "charging")
    assert [(e.arm, e.value) for e in fired][:1] == [(ANE, "not charging")]
    assert len({e.arm for e in fired}) == len(fired)


def test_decode_dropping_below_burst_alerts_for_the_arm_that_fades():
    long = SHORT.replace("seconds = 120", "seconds = 300")
    the_plan = plan(TWO_ARMS, s=long, a="[alerts]\ndecode_drop_pct = 25\n")
    fired = alerts(run_plan(the_plan), "decode_drop")
    # the ANE arm fades from its burst; the GPU arm, started warm (protocol v1), holds
    assert [e.arm for e in fired] == [ANE]
    assert fired[0].value < fired[0].threshold


# -- the hook -----------------------------------------------------------------------------------

HOOK = """import json, os, sys
keys = ("ANEMON_ALERT", "ANEMON_ARM", "ANEMON_VALUE", "ANEMON_THRESHOLD", "ANEMON_TAG")
with open(sys.argv[1], "a") as out:
    out.write(json.dumps({"argv": sys.argv[2:], **{k: os.environ.get(k) for k in keys}}) + "\\n")
"""


def test_alerts_run_the_hook_with_their_environment_and_no_shell(tmp_path):
    script = tmp_path / "hook.py"
    script.write_text(HOOK)
    out = tmp_path / "alerts.jsonl"
    hook = json.dumps([sys.executable, str(script), str(out), "$HOME; echo no-shell"])
    the_plan = plan(TWO_ARMS, s=SHORT, a=f'[alerts]\nthermal = "serious"\nhook = {hook}\n',
                    sim='[sim]\nstart_thermal = "serious"\n')  # fmt: skip
    ran = run_plan(the_plan, force=True)
    calls = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(calls) == len(alerts(ran)) == 2
    assert {c["ANEMON_ARM"] for c in calls} == {ANE, GPU}
    assert all(c["ANEMON_ALERT"] == "thermal" and c["ANEMON_TAG"] == "t" for c in calls)
    assert all(c["ANEMON_VALUE"] == "serious" for c in calls)
    assert all(c["argv"] == ["$HOME; echo no-shell"] for c in calls)  # literal: no shell
    assert not [m for m in ran.of(MarkerEvent) if m.source == "alerts"]  # no failure


def test_a_failing_or_hanging_hook_is_recorded_and_the_run_goes_on(tmp_path):
    script = tmp_path / "fail.py"
    script.write_text("import sys\nprint('no pager configured', file=sys.stderr)\nsys.exit(3)\n")
    hook = json.dumps([sys.executable, str(script)])
    the_plan = plan(TWO_ARMS, s=SHORT, a=f'[alerts]\nthermal = "serious"\nhook = {hook}\n',
                    sim='[sim]\nstart_thermal = "serious"\n')  # fmt: skip
    ran = run_plan(the_plan, force=True)
    notes = [m.note for m in ran.of(MarkerEvent) if m.source == "alerts"]
    assert notes == ["alert hook for thermal: exited with status 3: no pager configured"] * 2
    assert ran.result.exit_status == 0


def run_hook(argv: list[str], timeout_s: float) -> str | None:
    hook = Hook.start(argv, {}, timeout_s)
    return hook if isinstance(hook, str) else hook.wait()


def test_a_hook_past_its_timeout_is_killed():
    argv = [sys.executable, "-c", "import time; time.sleep(60)"]
    assert run_hook(argv, 0.3) == "timed out after 0.3 s (killed)"
    assert run_hook(["/nonexistent/hook"], 1).startswith("could not start /nonexistent/hook")
    assert run_hook([sys.executable, "-c", "pass"], 10) is None


# A hook that starts a child in the background, says its pid and exits 0 at once.
BACKGROUND = """import subprocess, sys
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
with open(sys.argv[1], "a") as out:
    out.write(f"{child.pid}\\n")
"""
# A hook that says its pid, then hangs.
HANGING = """import os, sys, time
with open(sys.argv[1], "a") as out:
    out.write(f"{os.getpid()}\\n")
time.sleep(600)
"""


@needs_proc
def test_a_background_child_of_a_hook_is_killed_at_the_hooks_timeout(tmp_path):
    (tmp_path / "hook.py").write_text(BACKGROUND)
    pids = tmp_path / "pids"
    assert run_hook([sys.executable, str(tmp_path / "hook.py"), str(pids)], 0.5) is None
    child = int(until_exists(pids, "the hook's child"))
    until_gone([child], "the hook's background child, past the hook's timeout")


@needs_proc
def test_a_background_child_of_a_hook_is_killed_when_the_run_ends(tmp_path):
    (tmp_path / "hook.py").write_text(BACKGROUND)
    pids = tmp_path / "pids"
    hook = json.dumps([sys.executable, str(tmp_path / "hook.py"), str(pids)])
    alerting = f'[alerts]\nthermal = "serious"\nhook = {hook}\nhook_timeout_s = 600\n'
    the_plan = plan(TWO_ARMS, s=SHORT, sim='[sim]\nstart_thermal = "serious"\n', a=alerting)
    ran = run_plan(the_plan, force=True)
    children = [int(line) for line in until_exists(pids, "the hooks' children").split()]
    assert len(children) == len(alerts(ran)) == 2  # a hook per arm, each left a child
    until_gone(children, "the hooks' background children, after the run")


@needs_proc
def test_sigint_while_a_hook_hangs_kills_it_and_exits_130(tmp_path):
    (tmp_path / "hook.py").write_text(HANGING)
    pids = tmp_path / "pids"
    hook = json.dumps([sys.executable, str(tmp_path / "hook.py"), str(pids)])
    (tmp_path / "p.toml").write_text(TWO_ARMS + SHORT + '[sim]\nstart_thermal = "serious"\n'
                                     f'[alerts]\nthermal = "serious"\nhook = {hook}\n'
                                     "hook_timeout_s = 600\n")  # fmt: skip
    argv = [sys.executable, "-m", "anemon", "run", "p.toml", "--headless", "--no-record",
            "--speed", "max", "--force"]  # fmt: skip
    anemon = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, start_new_session=True)  # fmt: skip
    try:
        hooked = int(until_exists(pids, "the hook").split()[0])
        anemon.send_signal(signal.SIGINT)
        # the hook's timeout is 600 s: an exit before this guard is the hook killed
        _, err = anemon.communicate(timeout=TIMEOUT_S)
    finally:
        anemon.kill()
        anemon.wait()
    assert anemon.returncode == 130, err.decode()
    assert b"Traceback" not in err
    hooks = [int(pid) for pid in pids.read_text().split()]  # one, or both arms' by then
    assert hooked in hooks
    until_gone(hooks, "the hanging hooks, after SIGINT")
    assert [in_group(pid) for pid in (*hooks, anemon.pid)] == [[]] * (len(hooks) + 1)


# -- bad [alerts] -------------------------------------------------------------------------------

BASE = f'tag = "x"\n[[arms]]\nname = "{ANE}"\n[alerts]\n'


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("decode_drop_pct = 101", r"^p\.toml:5: alerts\.decode_drop_pct: 101 is out of range"),
        ("battery_floor_pct = -1", r"^p\.toml:5: alerts\.battery_floor_pct: -1 is out of range"),
        ("disk_floor_gb = inf", r"^p\.toml:5: alerts\.disk_floor_gb: not a finite number"),
        ("hook_timeout_s = 0", r"^p\.toml:5: alerts\.hook_timeout_s: 0 is out of range"),
        ('thermal = "hot"', r"^p\.toml:5: alerts\.thermal: 'hot' is not one of"),
        ('hook = "no-such-anemon-hook --x"', r"^p\.toml:5: alerts\.hook: 'no-such-anemon-hook' "
                                             r"cannot be found"),
        ("hook = [1, 2]", r"^p\.toml:5: alerts\.hook: must be a string or an array of strings"),
        ("hook = \"a 'b\"", r"^p\.toml:5: alerts\.hook: cannot be split"),
        ("nap = 1", r"^p\.toml:5: alerts\.nap: unknown key"),
    ],
)  # fmt: skip
def test_bad_alerts_are_refused_with_file_line_and_key(line, message):
    with pytest.raises(PlanError, match=message):
        parse_plan(BASE + line + "\n", "p.toml")


def test_a_hook_given_as_a_string_is_split_as_arguments():
    spec = parse_plan(BASE + f"hook = \"{sys.executable} -c 'print(1)'\"\n", "p.toml").alerts
    assert spec.hook == (sys.executable, "-c", "print(1)")


def test_a_bad_hook_exits_2_before_anything_starts(tmp_path, capsys):
    path = tmp_path / "p.toml"
    path.write_text(BASE + 'hook = "no-such-anemon-hook"\n')
    assert main(["run", str(path), "--headless", "--no-record"]) == 2
    err = capsys.readouterr().err
    assert f"{path}:5: alerts.hook:" in err and "Traceback" not in err
    assert not Path("anemon-recordings").joinpath("x").exists()


def crash_alerts(spec_text: str) -> list[AlertEvent]:
    """Alerts of a plan's `[alerts]` when two crash reports name the app in one arm."""
    from anemon.control.alerts import Alerts
    from anemon.events import CrashEvent, StartEvent
    from anemon.pipeline import Pipeline

    spec = plan(TWO_ARMS, s=SHORT, a=spec_text).alerts
    pipeline = Pipeline()
    Alerts(spec, pipeline, tag="t")  # no running loop: an alert is emitted at once
    pipeline.emit_now(StartEvent, arm=ANE)
    for reason in ("jetsam: per-process-limit at 2.2 GB", "exited on signal 9"):
        pipeline.emit_now(CrashEvent, arm=ANE, report="jetsam", reason=reason, file="J.ips")
    return [e for e in pipeline.session.log if isinstance(e, AlertEvent)]


def test_a_crash_report_alerts_by_default_once_per_arm():
    (alert,) = crash_alerts("")
    assert (alert.alert, alert.arm, alert.value) == ("crash", ANE, "jetsam")
    assert alert.note == "the app's jetsam report: jetsam: per-process-limit at 2.2 GB"


def test_the_crash_alert_can_be_turned_off():
    assert crash_alerts("[alerts]\ncrash = false\n") == []
