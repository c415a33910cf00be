"""What the app is given at launch (docs/spec/line-protocol.md) and how refusals are retried."""

from __future__ import annotations

from anemon.control.plan import ArmSpec, Plan

BACKOFF_FIRST_S = 5.0
BACKOFF_MAX_S = 120.0
IDLE_INTERVAL_S = 5.0
"""How often the cooldown probe (AB_MODE=idle) writes an IDLE line."""


def _number(value: float) -> str:
    return f"{value:g}"


def app_env(plan: Plan, arm: ArmSpec) -> dict[str, str]:
    """The environment of one launch of an arm; the arm's own `env` wins on a clash."""
    protocol = plan.protocol
    env = {
        "AB_MODEL": arm.name,
        "AB_TAG": plan.tag,
        "AB_LOG": plan.log_path,
        "AB_MODE": protocol.kind,
        "AB_SECONDS": _number(protocol.seconds),
        "AB_TRIALS": str(protocol.trials),
        "AB_PROMPT": str(protocol.prompt),
        "AB_GEN": str(protocol.gen),
    }
    return env | dict(arm.env)


def probe_env(plan: Plan) -> dict[str, str]:
    """The thermal probe during a cooldown: no model, an IDLE line every few seconds."""
    return {
        "AB_MODE": "idle",
        "AB_TAG": plan.tag,
        "AB_LOG": plan.log_path,
        "AB_INTERVAL": _number(IDLE_INTERVAL_S),
    }


def backoff_s(retry: int) -> float:
    """The wait before retry number `retry` (1-based): 5, 10, 20, 40, 80, 120, 120 ... s."""
    return min(BACKOFF_FIRST_S * 2 ** (retry - 1), BACKOFF_MAX_S)
