"""Value domains of the line protocol: each converter returns None for a value it cannot read."""

from __future__ import annotations

from anemon.events import BATTERY_STATES, THERMAL_NAMES

_THERMAL = {name: i for i, name in enumerate(THERMAL_NAMES)} | {
    str(i): i for i in range(len(THERMAL_NAMES))
}
_BOOLS = {"0": False, "1": True, "false": False, "true": True, "no": False, "yes": True}


def to_float(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value == value else None  # NaN is "did not parse"


def to_int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        value = to_float(text)
        return int(value) if value is not None and value.is_integer() else None


def to_bool(text: str) -> bool | None:
    return _BOOLS.get(text.lower())


def to_thermal(text: str) -> int | None:
    return _THERMAL.get(text.lower())


def to_battery(text: str) -> float | None:
    """Percent 0-100; a decimal fraction 0.0-1.0 is scaled; -1 (unknown) is None."""
    value = to_float(text)
    if value is None or value < 0:
        return None
    if "." in text and value <= 1.0:
        return value * 100.0
    return value if value <= 100.0 else None


def to_battery_state(text: str) -> str | None:
    lowered = text.lower()
    return lowered if lowered in BATTERY_STATES else None


def is_unknown_battery(text: str) -> bool:
    """`-1` means the app had battery monitoring off: missing, but not a parse warning."""
    return text.strip() in ("-1", "-1.0")
