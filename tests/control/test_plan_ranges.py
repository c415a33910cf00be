"""Plans: every number has a range, dotted keys and non-UTF-8 files name file, line and key
(issue 15, class 6)."""

from __future__ import annotations

import dataclasses
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anemon.cli import main
from anemon.control.plan import (
    RANGES,
    AlertSpec,
    CooldownSpec,
    GuardSpec,
    PlanError,
    ProtocolSpec,
    SimArmSpec,
    SimSpec,
    load_plan,
    parse_plan,
)
from anemon.devices.base import DeviceSpec

ARM = '[[arms]]\nname = "minicpm5_1b_ane_pal8"\n'
SECTIONS = {"device": DeviceSpec, "protocol": ProtocolSpec, "cooldown": CooldownSpec,
            "guards": GuardSpec, "alerts": AlertSpec, "sim": SimSpec,
            "sim.arms": SimArmSpec}  # fmt: skip


def with_value(section: str, key: str, value: str) -> str:
    """A minimal plan with `key = value` in `section` (line 3)."""
    if section == "sim.arms":
        return f'tag = "x"\n{ARM}[sim.arms.minicpm5_1b_ane_pal8]\n{key} = {value}\n'
    return f'tag = "x"\n[{section}]\n{key} = {value}\n{ARM}'


def line_of(section: str) -> int:
    return 5 if section == "sim.arms" else 3


def test_every_numeric_field_has_a_range():
    numeric = {
        (section, f.name)
        for section, cls in SECTIONS.items()
        for f in dataclasses.fields(cls)
        if f.type in ("float", "int")
    }
    assert numeric == set(RANGES)


def is_int(section: str, key: str) -> bool:
    spec = SECTIONS[section](**({"profile": "p"} if section == "sim.arms" else {}))
    return isinstance(getattr(spec, key), int)


ABSURD = [
    (section, key, value)
    for section, key in sorted(RANGES)
    for value in ("-1", "99999999999999999999")
    + (() if is_int(section, key) else ("inf", "-inf", "nan", "1e300"))
]


@pytest.mark.parametrize(("section", "key", "value"), ABSURD)
def test_an_absurd_number_is_refused_with_file_line_and_key(section, key, value):
    with pytest.raises(PlanError) as e:
        parse_plan(with_value(section, key, value), "p.toml")
    message = str(e.value)
    assert message.startswith(f"p.toml:{line_of(section)}: {section}")
    assert f".{key}: " in message and "(expected " in message


@pytest.mark.parametrize(("section", "key"), sorted(RANGES))
def test_the_bounds_themselves_are_accepted(section, key):
    check = RANGES[(section, key)]
    low = check.low if not check.open_low else check.high / 2
    for value in (low, check.high):
        text = str(int(value)) if is_int(section, key) else repr(float(value))
        text += EXTRA.get((section, key), "")
        parse_plan(with_value(section, key, text), "p.toml")


EXTRA = {("cooldown", "min_s"): "\ncap_s = 86400", ("cooldown", "cap_s"): "\nmin_s = 0"}
"""What makes the other key of a pair agree (cap_s >= min_s)."""
FLOATS = sorted(where for where in RANGES if not is_int(*where))


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(FLOATS), st.floats(allow_nan=True, allow_infinity=True))
def test_any_float_is_accepted_only_in_its_range(where, value):
    section, key = where
    check = RANGES[where]
    text = repr(value)
    try:
        parse_plan(with_value(section, key, text + EXTRA.get(where, "")), "p.toml")
    except PlanError as e:
        assert check(value) is not None, str(e)
    else:
        assert check(value) is None


def test_a_float_count_is_the_wrong_type():
    with pytest.raises(PlanError, match=r"^p\.toml:3: protocol\.trials: must be an integer"):
        parse_plan(with_value("protocol", "trials", "1e12"), "p.toml")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('tag = "x"\ndevice.kind = "phone"\n' + ARM, r"^p\.toml:2: device\.kind: 'phone' is not"),
        ('tag = "x"\nprotocol.trials = 0\n' + ARM, r"^p\.toml:2: protocol\.trials: 0 is out of"),
        ('tag = "x"\n[a.b]\nc = 1\n' + ARM, r"^p\.toml:2: a: unknown key"),
        ('tag = "x"\narms.x.model = "m"\n', r"^p\.toml:2: arms: must be one or more"),
        ('tag = "x"\n[device]\nkind.x = 1\n' + ARM, r"^p\.toml:3: device\.kind: must be a string"),
        ('tag = "x"\nsim.arms.nobody.fault = "hang"\n' + ARM,
         r"^p\.toml:2: sim\.arms\.nobody: no \[\[arms\]\]"),
    ],
)  # fmt: skip
def test_dotted_keys_and_subtables_name_their_line(text, message):
    with pytest.raises(PlanError, match=message):
        parse_plan(text, "p.toml")


def test_a_plan_that_is_not_utf8_names_its_line_and_key(tmp_path):
    path = tmp_path / "p.toml"
    path.write_bytes(b'tag = "x"\n[[arms]]\nname = "caf\xe9"\n')
    with pytest.raises(PlanError) as e:
        load_plan(path)
    expected = r":3: arms\[0\]\.name: not UTF-8 text \(byte 0xe9 at column 12\); save the plan"
    assert re.fullmatch(re.escape(str(path)) + expected + " as UTF-8", str(e.value))


def test_not_utf8_through_the_command_is_one_line_and_exit_2(tmp_path, capsys):
    path = tmp_path / "p.toml"
    path.write_bytes(b'tag = "x"\n\xff\xfe = 1\n' + ARM.encode())
    assert main(["run", str(path), "--headless", "--no-record"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{path}:2: not UTF-8 text (byte 0xff" in err


def test_an_arm_name_with_control_characters_is_refused():
    with pytest.raises(PlanError, match=r"arms\[0\]\.name: 'a\\x1b\[2J': no spaces"):
        parse_plan('tag = "x"\n[[arms]]\nname = "a\\u001b[2J"\n', "p.toml")


def test_too_many_arms_and_too_long_names_are_refused():
    many = 'tag = "x"\n' + "".join(f'[[arms]]\nname = "a{i}"\n' for i in range(1001))
    with pytest.raises(PlanError, match=r"^p\.toml:2: arms: 1001 arms \(expected at most 1000\)"):
        parse_plan(many, "p.toml")
    with pytest.raises(PlanError, match=r"^p\.toml:1: tag: 300 characters"):
        parse_plan(f'tag = "{"t" * 300}"\n{ARM}', "p.toml")
