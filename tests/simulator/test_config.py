"""Configuration is checked when it is built, with messages that name the bad value."""

from __future__ import annotations

import pytest

from anemon.simulator import FAULTS, SimArmConfig, SimConfig


def test_unknown_profile_fault_or_state_is_rejected():
    with pytest.raises(ValueError, match="llama"):
        SimArmConfig(profile="llama")
    with pytest.raises(ValueError, match="explode"):
        SimArmConfig(profile="minicpm5_1b_ane_pal8", fault="explode")
    with pytest.raises(ValueError, match="nominal"):
        SimConfig(start_thermal="cold")
    with pytest.raises(ValueError):
        SimArmConfig(profile="minicpm5_1b_ane_pal8", fault_at_s=-1)


def test_the_plan_fault_kinds_are_all_known():
    assert FAULTS == ("none", "hang", "load_error", "gpu_timeout", "stall", "refuse_launch",
                      "busy", "unplug", "jetsam")  # fmt: skip


def test_an_arm_not_configured_runs_its_built_in_profile():
    config = SimConfig(arms={"a": SimArmConfig(profile="qwen3_1_7b_ane", fault="hang")})
    assert config.arm("a") == SimArmConfig(profile="qwen3_1_7b_ane", fault="hang")
    assert config.arm("minicpm5_2b_ane") == SimArmConfig(profile="minicpm5_2b_ane")
    assert config.arm("nothing") is None


def test_an_arm_is_found_by_its_name_and_else_runs_its_models_profile():
    """Arms launched with AB_ARM: two arms of one AB_MODEL have settings of their own."""
    config = SimConfig(arms={"a": SimArmConfig(profile="qwen3_1_7b_ane", fault="hang")})
    assert config.arm("a", "minicpm5_2b_ane").fault == "hang"
    assert config.arm("b", "minicpm5_2b_ane") == SimArmConfig(profile="minicpm5_2b_ane")


def test_configs_are_frozen():
    config = SimConfig(arms={"a": SimArmConfig(profile="qwen3_1_7b_ane")})
    with pytest.raises(AttributeError):
        config.seed = 3  # type: ignore[misc]
    with pytest.raises(TypeError):
        config.arms["b"] = SimArmConfig(profile="qwen3_1_7b_ane")  # type: ignore[index]
