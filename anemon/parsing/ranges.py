"""The valid range of every numeric field, for log lines and recordings alike.

A log or a recording is someone else's bytes: `decode_tps=inf`, `gen=` with 23 digits or a
negative count would reach charts, sums and int64 casts as they are. A value outside its range
is treated like one that did not parse: the field is missing and a warning is counted. One table
serves the line parser (anemon/parsing/protocol.py) and the recording codec
(anemon/recording/codec.py), keyed by the event field's name (docs/spec/line-protocol.md
"Fields").
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True, slots=True)
class Range:
    """Finite values from `low` to `high`, both included."""

    low: float
    high: float
    unit: str = ""

    def holds(self, value: float) -> bool:
        # Finite bounds: NaN compares false and infinities fall outside; an int of any size
        # compares exactly, without a float conversion that could overflow.
        return self.low <= value <= self.high

    def describe(self) -> str:
        """`0 to 1e9 tok/s`, for a warning."""
        unit = f" {self.unit}" if self.unit else ""
        return f"{_short(self.low)} to {_short(self.high)}{unit}"


def _short(bound: float) -> str:
    """100, -100, 1e9: a bound as a person reads it."""
    return f"{bound:g}".replace("e+0", "e").replace("e+", "e")


MAX_COUNT = 10**9
"""Tokens, trials, indices: far above any real run, far below int64."""
_COUNT = Range(0, MAX_COUNT)
_RATE = Range(0, 1e9, "tok/s")
_SECONDS = Range(0, 1e8, "s")
"""A duration (about three years): a process's own clock, a load, a cooldown."""
_GB = Range(0, 1e6, "GB")

RANGES = MappingProxyType(
    {
        # counts
        "p": _COUNT,
        "g": _COUNT,
        "n": _COUNT,
        "trial": _COUNT,
        "prompt_tokens": _COUNT,
        "gen": _COUNT,
        "trials": _COUNT,
        "warnings": _COUNT,
        "summary_version": _COUNT,
        # rates
        "prompt_tps": _RATE,
        "decode_tps": _RATE,
        # durations
        "app_t": _SECONDS,
        "load_s": _SECONDS,
        "elapsed_s": _SECONDS,
        "min_s": _SECONDS,
        "cap_s": _SECONDS,
        # sizes
        "free_gb": _GB,
        "total_gb": _GB,
        "footprint_gb": _GB,
        # the phone's readings
        "battery": Range(0, 100, "%"),
        "thermal": Range(0, 3),
        "temperature_c": Range(-100, 200, "°C"),
        # |current| x voltage, drawing or charging alike (devices/pmd3/power.py, the simulator)
        "power_w": Range(0, 1000, "W"),
        # the phone's system load (PowerTelemetryData): over 30 W is not a phone
        "load_w": Range(0, 30, "W"),
        "power_in_w": Range(0, 200, "W"),
        "battery_power_w": Range(-200, 200, "W"),
        "load_changed_t": Range(0, 1e11, "s"),
        # the bench app's process (DVT): % of one core on a phone of at most 16 cores
        "pid": Range(0, 2**31 - 1),
        "cpu_pct": Range(0, 1600, "%"),
        "mem_gb": Range(0, 64, "GB"),
        "gpu_pct": Range(0, 100, "%"),
        # a foreign tool's report of a round (ReportEvent)
        "tokens": _COUNT,
        "thermal_start": Range(0, 3),
        "thermal_peak": Range(0, 3),
        "thermal_end": Range(0, 3),
        "energy_j": Range(0, 1e9, "J"),
        "j_per_token": Range(0, 1e6, "J"),
        "battery_drop": Range(0, 100, "%"),
        # an event's clocks: session seconds, epoch seconds (a line's timestamp too), 1970-5138
        "t": Range(0, 1e11, "s"),
        "wall": Range(0, 1e11, "s"),
    }
)
"""Valid values by event field name; a numeric field not listed has no bound but finiteness."""


FINITE = Range(-sys.float_info.max, sys.float_info.max)
"""The range of a numeric field the table does not list: any finite number."""


def bounds(name: str) -> Range:
    """The range of the numeric field `name`."""
    return RANGES.get(name, FINITE)


def in_range(name: str, value: float) -> bool:
    """Whether `value` is a valid value of the numeric field `name` (always finite)."""
    return RANGES.get(name, FINITE).holds(value)


def describe(name: str) -> str:
    """What `name` may hold, for a warning: `0 to 1e9 tok/s`."""
    return RANGES.get(name, FINITE).describe()
