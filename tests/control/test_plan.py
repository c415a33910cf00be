"""Plans: docs/spec/plan.md's example is accepted as written; each problem names file, line, key."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from anemon.cli import main
from anemon.control.plan import FAULTS, PlanError, load_plan, parse_plan
from anemon.simulator import FAULTS as SIM_FAULTS

SPEC = Path(__file__).parents[2] / "anemon" / "data" / "demo.toml"
EXAMPLE = """\
tag = "sustain-1b"

[device]
kind = "sim"
id = ""
poll_s = 2.0

[app]
bundle = "com.example.bench"
log = "Documents/sustain/{tag}.log"
install = ""

[protocol]
kind = "sustain"
seconds = 600
prompt = 128
gen = 256
rounds = 2
trials = 5

[cooldown]
min_s = 180
until = "fair"
cap_s = 600

[guards]
settle_after_install_s = 10
launch_retries = 5
first_trial_timeout_s = 1500
stall_timeout_s = 120
min_free_gb = 5
on_error = "next-arm"

[[arms]]
name = "minicpm5_1b_ane_pal8"
env = { AB_MODEL = "minicpm5_1b_ane_pal8" }

[[arms]]
name = "minicpm5_1b_gpu_int8"
env = { AB_MODEL = "minicpm5_1b_gpu_int8" }

[sim]
start_thermal = "nominal"
plugged = true
free_gb = 38.0

[sim.arms.minicpm5_1b_ane_pal8]
profile = "minicpm5_1b_ane_pal8"
fault = "none"
fault_at_s = 0
fault_count = 1
"""


def test_the_spec_example_is_accepted_with_its_values():
    plan = parse_plan(EXAMPLE, "p.toml")
    assert plan.tag == "sustain-1b" and plan.log_path == "Documents/sustain/sustain-1b.log"
    assert [a.name for a in plan.arms] == ["minicpm5_1b_ane_pal8", "minicpm5_1b_gpu_int8"]
    assert plan.cooldown.until == "fair" and plan.guards.on_error == "next-arm"
    assert plan.sim.arms["minicpm5_1b_gpu_int8"].profile == "minicpm5_1b_gpu_int8"  # defaulted
    assert plan.to_dict()["guards"]["first_trial_timeout_s"] == 1500


def test_defaults_fill_a_minimal_plan():
    plan = parse_plan('tag = "x"\n[[arms]]\nname = "qwen3_1_7b_ane"\n')
    assert plan.device.kind == "sim" and plan.protocol.seconds == 600
    assert plan.cooldown.min_s == 180 and plan.cooldown.cap_s == 600
    assert plan.guards.launch_retries == 5


@pytest.mark.parametrize(
    ("old", "new", "line", "key", "problem"),
    [
        ('on_error = "next-arm"', 'on_error = "stop"', 32, "guards.on_error", "not one of"),
        ("poll_s = 2.0", "poll_s = true", 6, "device.poll_s", "must be a number"),
        ("prompt = 128", 'prompt = "128"', 16, "protocol.prompt", "must be an integer"),
        ("seconds = 600", "seconds = -1", 15, "protocol.seconds",
         "-1 is out of range (expected > 0 and <= 86400 seconds)"),
        ('until = "fair"', 'until = "cool"', 23, "cooldown.until", "not one of"),
        ("cap_s = 600", "cap_s = 60", 24, "cooldown.cap_s", "below min_s"),
        ('AB_MODEL = "minicpm5_1b_gpu_int8"', "AB_MODEL = 8", 40, "arms[1].env.AB_MODEL",
         "must be a string"),
        ('fault = "none"', 'fault = "melt"', 49, "sim.arms.minicpm5_1b_ane_pal8.fault",
         "not one of"),
        ("free_gb = 38.0", "free_gb = 38.0\nseed = 3", 46, "sim.seed", "unknown key"),
        ('kind = "sustain"', 'kind = "sustain"\nsecond = 60', 15, "protocol.second", "unknown"),
        ('tag = "sustain-1b"', 'tag = "my run"', 1, "tag", "only letters"),
        ("plugged = true", "plugged = 1", 44, "sim.plugged", "must be true or false"),
        ("launch_retries = 5", "launch_retries = 1.5", 28, "guards.launch_retries",
         "must be an integer"),
        ('id = ""', "id = 0", 5, "device.id", "must be a string, not an integer"),
        ("fault_count = 1", "fault_count = -1", 51, "sim.arms.minicpm5_1b_ane_pal8.fault_count",
         "expected >= 0 and <= 1000"),
        ('profile = "minicpm5_1b_ane_pal8"', 'profile = "gpt5"', 48,
         "sim.arms.minicpm5_1b_ane_pal8.profile", "no built-in profile"),
    ],
)  # fmt: skip
def test_each_problem_names_file_line_and_key(old, new, line, key, problem):
    assert old in EXAMPLE
    with pytest.raises(PlanError) as e:
        parse_plan(EXAMPLE.replace(old, new, 1), "p.toml")
    message = str(e.value)
    assert message.startswith(f"p.toml:{line}: {key}: "), message
    assert problem in message and "\n" not in message


V2_KEYS = """
tag = "x"
[device]
kind = "pymobiledevice3"
connect = "network"
host = "192.0.2.7"
power_s = 0.5
[protocol]
battery = "unplugged"
[[arms]]
name = "minicpm5_1b_ane_pal8"
[sim.arms.minicpm5_1b_ane_pal8]
power_w = 4.0
"""


def test_the_version_2_keys_are_read():
    plan = parse_plan(V2_KEYS, "p.toml")
    assert (plan.device.connect, plan.device.host, plan.device.power_s) == (
        "network", "192.0.2.7", 0.5)  # fmt: skip
    assert plan.protocol.battery == "unplugged"
    assert plan.sim.arms["minicpm5_1b_ane_pal8"].power_w == 4.0


def test_the_version_2_keys_default_to_version_1_behaviour():
    plan = parse_plan('tag = "x"\n[[arms]]\nname = "qwen3_1_7b_ane"\n')
    assert (plan.device.connect, plan.device.power_s, plan.protocol.battery) == ("usb", 1.0, "any")
    assert plan.sim.arms["qwen3_1_7b_ane"].power_w == 0.0


@pytest.mark.parametrize(
    ("old", "new", "key", "problem"),
    [
        ('connect = "network"', 'connect = "bluetooth"', "device.connect", "not one of"),
        ("power_s = 0.5", "power_s = 0", "device.power_s", "expected >= 0.01 and <= 3600"),
        ('battery = "unplugged"', 'battery = "drained"', "protocol.battery", "not one of"),
        (
            "power_w = 4.0",
            "power_w = -1",
            "sim.arms.minicpm5_1b_ane_pal8.power_w",
            "-1 is out of range",
        ),
    ],
)
def test_each_bad_version_2_value_names_its_key(old, new, key, problem):
    with pytest.raises(PlanError) as e:
        parse_plan(V2_KEYS.replace(old, new, 1), "p.toml")
    assert f": {key}: " in str(e.value) and problem in str(e.value)


def test_a_stall_fault_is_accepted():
    plan = parse_plan(EXAMPLE.replace('fault = "none"', 'fault = "stall"', 1), "p.toml")
    assert plan.sim.arms["minicpm5_1b_ane_pal8"].fault == "stall"


def test_the_fault_kinds_match_the_simulators():
    assert FAULTS == SIM_FAULTS


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[arms]]\nname = "a"\n', r"^p\.toml: tag: required"),
        ('tag = "x"\n', r"^p\.toml: arms: required"),
        ('tag = "x"\n[[arms]]\nname = \n', r"^p\.toml:3: not valid TOML"),
        ('tag = "x"\n[[arms]]\nname = "a"\n[[arms]]\nname = "a"\n',
         r"^p\.toml:5: arms\[1\]\.name: 'a' appears twice"),
        ('tag = "x"\n[[arms]]\nname = "a"\n[sim.arms.b]\nfault = "hang"\n',
         r"^p\.toml:4: sim\.arms\.b: no \[\[arms\]\] is named 'b'"),
        ('tag = "x"\n[[arms]]\nname = "mystery"\n',
         r"^p\.toml:3: arms\[0\]\.name: 'mystery' needs"),
        ('tag = "x"\narms = 3\n', r"^p\.toml:2: arms: must be one or more \[\[arms\]\] tables"),
        ('tag = "x"\n[[arms]]\nenv = {}\n', r"^p\.toml:2: arms\[0\]: every arm needs a name"),
        ('tag = "x"\ndevice = 1\n[[arms]]\nname = "a"\n',
         r"^p\.toml:2: device: must be a table \[device\], not an integer"),
    ],
)  # fmt: skip
def test_missing_pieces_and_bad_toml(text, message):
    with pytest.raises(PlanError, match=message):
        parse_plan(text, "p.toml")


def test_a_real_device_needs_no_simulator_profile():
    plan = parse_plan('tag = "x"\n[device]\nkind = "devicectl"\n[[arms]]\nname = "mystery"\n')
    assert plan.arms[0].name == "mystery" and plan.sim.arms["mystery"].profile == "mystery"


def test_a_plan_run_on_another_kind_is_checked_for_that_kind():
    """--device: a simulator plan run on a real phone needs no profile; a real phone's plan
    run on the simulator needs one, said as any plan problem is (file, line, key)."""
    on_sim = 'tag = "x"\n[[arms]]\nname = "mystery"\n'
    with pytest.raises(PlanError, match=r"needs \[sim\.arms\.mystery\] profile"):
        parse_plan(on_sim, "p.toml")
    assert parse_plan(on_sim, "p.toml", "devicectl").device.kind == "devicectl"
    on_phone = 'tag = "x"\n[device]\nkind = "devicectl"\n[[arms]]\nname = "mystery"\n'
    with pytest.raises(PlanError, match=r"^p\.toml:\d+: arms\[0\]\.name: 'mystery' needs"):
        parse_plan(on_phone, "p.toml", "sim")


def test_the_bundled_demo_plan_is_valid():
    plan = load_plan(SPEC)
    assert plan.cooldown.until == "fair" and len(plan.arms) == 2


def test_run_with_a_bad_plan_exits_2_with_one_line_and_touches_nothing(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text(EXAMPLE.replace('until = "fair"', "until = 3"))
    record = tmp_path / "rec.jsonl"
    assert main(["run", str(bad), "--headless", "--record", str(record)]) == 2
    err = capsys.readouterr().err.strip()
    assert re.fullmatch(rf"anemon: {re.escape(str(bad))}:23: cooldown\.until: .*", err)
    assert not record.exists()


def test_run_with_a_missing_plan_exits_2_with_one_line(tmp_path, capsys):
    missing = tmp_path / "missing.toml"
    assert main(["run", str(missing), "--headless"]) == 2
    err = capsys.readouterr().err.strip()
    assert re.fullmatch(rf"anemon: {re.escape(str(missing))}: cannot read the plan: .*", err)


V3_DEVICE = 'tag = "t"\n[[arms]]\nname = "qwen3_1_7b_ane"\n[device]\n'


def test_the_v3_device_keys_are_read_with_their_defaults():
    read = parse_plan(V3_DEVICE + 'process_s = 3.0\ncondition = "ThermalSerious"\n', "p.toml")
    assert (read.device.process_s, read.device.condition) == (3.0, "ThermalSerious")
    default = parse_plan(V3_DEVICE, "p.toml").device
    assert (default.process_s, default.condition) == (1.0, "")


@pytest.mark.parametrize(
    ("line", "key"),
    [("process_s = 0", "device.process_s"), ('condition = "Hot"', "device.condition")],
)
def test_the_v3_device_keys_are_checked(line: str, key: str):
    with pytest.raises(PlanError, match=f"^p.toml:5: {key}: "):
        parse_plan(V3_DEVICE + line + "\n", "p.toml")


def test_devicectl_refuses_a_condition_in_one_line():
    from anemon.devices import backend
    from anemon.devices.base import DeviceSpec
    from anemon.errors import AnemonError

    spec = DeviceSpec(kind="devicectl", condition="ThermalSerious")
    with pytest.raises(AnemonError, match="needs DVT's ConditionInducer") as caught:
        backend("devicectl").make(spec, None)  # type: ignore[arg-type]
    assert "\n" not in str(caught.value)
