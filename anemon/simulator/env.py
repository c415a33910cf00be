"""What the bench app is given at launch (docs/spec/line-protocol.md), read as the app reads it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

MODES = ("sustain", "ab", "idle")


@dataclass(frozen=True, slots=True)
class AppParams:
    model: str | None
    """AB_MODEL (not needed in idle mode)."""
    arm: str | None
    """AB_ARM, else AB_MODEL: the `arm=` of its lines and its `[sim.arms]` settings' name."""
    log_path: str
    mode: str
    seconds: float
    trials: int
    prompt: int
    gen: int
    interval: float
    problems: tuple[str, ...] = ()
    """What the app complains about (ERROR: lines) before exiting with reason=error."""


def _number(env: Mapping[str, str], key: str, default: float, problems: list[str]) -> float:
    raw = env.get(key)
    if raw is None or raw == "":
        return default
    try:
        n = float(raw)
    except ValueError:
        n = -1.0
    if n <= 0:
        problems.append(f"bad {key}={raw!r}")
        return default
    return n


def parse_env(env: Mapping[str, str]) -> AppParams:
    problems: list[str] = []
    mode = env.get("AB_MODE") or "sustain"
    if mode not in MODES:
        problems.append(f"bad AB_MODE={mode!r} (sustain, ab or idle)")
    model = env.get("AB_MODEL") or None
    if model is None and mode != "idle":
        problems.append("AB_MODEL is not set")
    tag = env.get("AB_TAG") or "bench"
    return AppParams(
        model=model,
        arm=env.get("AB_ARM") or model,
        log_path=env.get("AB_LOG") or f"Documents/sustain/{tag}.log",
        mode=mode,
        seconds=_number(env, "AB_SECONDS", 600, problems),
        trials=int(_number(env, "AB_TRIALS", 5, problems)),
        prompt=int(_number(env, "AB_PROMPT", 128, problems)),
        gen=int(_number(env, "AB_GEN", 256, problems)),
        interval=_number(env, "AB_INTERVAL", 10, problems),
        problems=tuple(problems),
    )
