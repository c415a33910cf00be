"""The built-in arms (docs/domain.md, "The arms") and the two compute paths.

One data table, no logic. Speeds are cool figures (before any throttling); the thermal model
scales them by the path's throttle curve (thermal.py). Figures the notebook does not give
("—") are estimates, marked `# est.`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PathPhysics:
    """How a compute path heats its die and throttles with it."""

    die_rise_k_per_w: float
    """Steady-state die temperature above the body, per watt the path draws."""
    throttle_onset_c: float
    """Die temperature where throttling begins."""
    throttle_full_c: float
    """Die temperature where the speed reaches its floor."""
    decode_floor: float
    """Decode speed at full throttle, as a fraction of the cool speed."""
    prefill_floor: float
    """Prefill speed at full throttle, as a fraction of the cool speed."""
    prefill_full_at: float
    """Where in the throttle span prefill reaches its floor (it throttles sooner)."""
    decode_noise: float
    """Relative spread (one sigma) of per-trial decode figures; prefill spreads a little more."""
    load_error: str
    """The message of an injected load failure on this path."""
    burst_w: float
    """Device power (the whole phone, screen on) while an arm of this path decodes at its
    burst rate (its cool decode speed); power.py scales it with the decode rate."""


# Keyword arguments, three to a line, so the two paths read side by side.
# fmt: off
PATHS: dict[str, PathPhysics] = {
    # The ANE plateaus ~31 % below its first minute once serious; prefill 3900 -> 2350.
    "ane": PathPhysics(
        die_rise_k_per_w=3.0, throttle_onset_c=39.5, throttle_full_c=47.0,
        decode_floor=0.70, prefill_floor=0.603, prefill_full_at=0.55,
        decode_noise=0.02, load_error="ANE compile failed (Code=4097)", burst_w=4.5,
    ),
    # The GPU at serious runs at about half its cool speed; its prefill barely throttles.
    "gpu": PathPhysics(
        die_rise_k_per_w=4.0, throttle_onset_c=41.0, throttle_full_c=43.6,
        decode_floor=0.515, prefill_floor=0.90, prefill_full_at=1.0,
        decode_noise=0.03, load_error="MTLLibrary compile failed (Code=4097)", burst_w=6.2,
    ),
}
# fmt: on


@dataclass(frozen=True, slots=True)
class ArmProfile:
    """One arm: a model bundle on one compute path."""

    name: str
    """The AB_MODEL value."""
    model: str
    compute: str
    """"ane" or "gpu" (a key of PATHS)."""
    bits: int
    decode_tps: float
    """Cool decode tok/s (first token excluded)."""
    prefill_tps: float
    """Cool prefill tok/s."""
    load_warm_s: tuple[float, float]
    """Range of a warm load (compile cache present)."""
    load_cold_s: float
    """A cold load: the on-device compile after an OS update."""
    footprint_gb: float
    """What the app's LOAD line says (`footprint_gb`: its own estimate of the model's size)."""
    heat_w: float
    """The heat the arm puts into the phone while generating (the thermal model's input,
    calibrated to the thermal states; the device power is the path's `burst_w`, power.py)."""
    cache_gb: float
    """Disk the compile cache takes after a cold load (all arms: 38 -> 18.5 GB free)."""
    resident_gb: float
    """The app's physical footprint once loaded (what jetsam counts and DVT's sysmontap
    reports): the notebook's where it measured one, else an estimate."""
    hangs: bool = False
    """The first generation never returns."""
    load_error: str | None = None
    """Every load fails with this message."""


_QWEN_ZOO_ERROR = (
    'invalidState("Failed to find an extend function with the max context length of 40960")'
)

PROFILES: dict[str, ArmProfile] = {
    p.name: p
    for p in (
        ArmProfile("minicpm5_1b_ane_pal8", "MiniCPM5-1B", "ane", 8, 75.6, 3900.0,
                   (0.06, 0.4), 120.0, 1.6, 1.8, 2.2, 1.9),  # cold, resident: est.
        ArmProfile("minicpm5_1b_gpu_int8", "MiniCPM5-1B", "gpu", 8, 64.5, 1195.0,
                   (0.5, 0.9), 9.0, 1.3, 2.0, 0.8, 1.6),  # loads, resident: est.
        ArmProfile("minicpm5_2b_ane", "MiniCPM5-2B", "ane", 4, 55.0, 2211.0,
                   (0.2, 0.3), 69.0, 1.4, 1.9, 3.0, 1.8),  # resident: est.
        ArmProfile("minicpm5_2b_ane_6bit", "MiniCPM5-2B", "ane", 6, 38.5, 1679.0,
                   (0.15, 0.25), 1380.0, 1.9, 1.5, 3.6, 2.6),
        ArmProfile("minicpm5_2b_ane_pal8", "MiniCPM5-2B", "ane", 8, 30.0, 1400.0,
                   (0.2, 0.3), 325.0, 2.4, 1.8, 3.6, 2.1,
                   hangs=True),  # speeds: never measured
        ArmProfile("minicpm5_2b_gpu_int8", "MiniCPM5-2B", "gpu", 8, 26.0, 948.0,
                   (0.8, 1.2), 13.8, 2.5, 2.2, 1.0, 2.9),  # warm load, resident: est.
        ArmProfile("minicpm5_2b_gpu_int4lin", "MiniCPM5-2B", "gpu", 4, 17.0, 382.0,
                   (1.9, 2.6), 6.0, 1.4, 2.0, 0.5, 1.7),  # cold, resident: est.
        ArmProfile("qwen3_1_7b_ane", "Qwen3-1.7B", "ane", 4, 56.0, 2211.0,
                   (0.08, 0.28), 5.0, 1.1, 1.9, 1.8, 1.7),
        ArmProfile("qwen3_1_7b_ane_6bit", "Qwen3-1.7B", "ane", 6, 40.0, 1700.0,
                   (0.12, 0.18), 795.0, 1.5, 1.6, 2.6, 2.1),  # speeds: est.
        ArmProfile("qwen3_1_7b_gpu_int4lin", "Qwen3-1.7B", "gpu", 4, 62.0, 1160.0,
                   (0.9, 1.05), 3.9, 1.1, 2.1, 0.4, 1.4),  # resident: est.
        ArmProfile("qwen3_1_7b_zoo_iosgpu", "Qwen3-1.7B", "gpu", 4, 60.0, 1100.0,
                   (0.8, 1.2), 4.0, 1.1, 2.1, 0.0, 1.3,
                   load_error=_QWEN_ZOO_ERROR),  # resident: est.
    )
}  # fmt: skip
