"""Events to and from the JSON objects of a recording line."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Mapping
from typing import Any

from anemon.events import EVENT_TYPES, THERMAL_NAMES, Event, UnknownEvent, thermal_name
from anemon.parsing.ranges import describe, in_range
from anemon.text import printable

_THERMAL_FIELDS = frozenset({"thermal"})
_OMIT = frozenset({"source"})


_FIELD_NAMES: dict[type[Event], tuple[str, ...]] = {}


def _field_names(cls: type[Event]) -> tuple[str, ...]:
    """The fields of an event class, in order (looked up once per class)."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


def to_record(event: Event) -> dict[str, Any]:
    """The JSON object of one event; thermal values are written as names, as the spec reads."""
    if isinstance(event, UnknownEvent):
        return {"kind": event.name, **_finite(event.fields)}
    record: dict[str, Any] = {"kind": event.kind}
    for name in _field_names(type(event)):
        value = getattr(event, name)
        if type(value) is float and not math.isfinite(value):
            value = None  # JSON has no NaN or Infinity: a reading that is not one is missing
        if name in _THERMAL_FIELDS:
            value = _thermal_name(value)
        elif name == "extra":
            value = dict(value) if value else None
        elif isinstance(value, tuple):  # a summary's arms: NaN inside is null too
            value = _finite(value)
        if (value is not None and value != "" and name not in _OMIT) or name in (
            "t",
            "wall",
            "arm",
        ):
            record[name] = value
    return record


def _thermal_name(value: Any) -> str | None:
    """A thermal state's name; a value no state has is left out rather than raise."""
    return thermal_name(value) if _thermal(value) == value and value is not None else None


def _finite(value: Any) -> Any:
    """`value` (kept from a recording) with every NaN or infinity in it made null."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


_INT_DIGITS = 4000
"""Longer integers are read as floats (infinite): Python's int() refuses past 4300 digits, which
would lose the whole line for one field; an infinite value is then left out by its range."""


def _parse_int(text: str) -> int | float:
    return int(text) if len(text) <= _INT_DIGITS else float(text)


def decode(text: str) -> Any:
    """One recording line's JSON; a number of any size is read (and judged later by its range).

    Raises ValueError for text that is not JSON, as json.loads does."""
    return json.loads(text, parse_int=_parse_int)


def from_record(
    record: Mapping[str, Any], source: str = "", damaged: Callable[[str], None] | None = None
) -> Event:
    """An event from a recorded object; unknown kinds and fields are kept, never dropped.

    A field with the wrong JSON type (a damaged recording) is left out, counted in the
    event's `warnings` where it has them, and told to `damaged` (what was wrong, one call each).
    """
    kind = record.get("kind")
    cls = EVENT_TYPES.get(kind) if isinstance(kind, str) else None
    t = _clock(record, "t", kind, damaged)
    wall = _clock(record, "wall", kind, damaged)
    arm = record.get("arm")
    arm = printable(arm) if isinstance(arm, str) else None
    if cls is None:
        rest = {k: val for k, val in record.items() if k not in ("kind", "t", "wall", "arm")}
        return UnknownEvent(t=t, wall=wall, arm=arm, source=source, name=str(kind), fields=rest)
    names = set(_field_names(cls))
    types = _field_types(cls)
    kwargs: dict[str, Any] = {}
    unknown: dict[str, str] = {}
    mistyped = 0
    for key, value in record.items():
        if key in ("kind", "t", "wall", "arm"):
            continue
        if key not in names:
            unknown[key] = value if isinstance(value, str) else repr(value)
        elif key in _THERMAL_FIELDS:
            kwargs[key] = thermal = _thermal(value)
            if thermal is None and value is not None and damaged is not None:
                damaged(f"{kind}: {key}={_shown(value)} is not a thermal state: left out")
        else:
            problem = _problem(key, value, types.get(key, _ANY_FIELD))
            if problem is None:
                kwargs[key] = _normal(key, value)
            else:  # a damaged recording: the field is missing, as an unparsable log value
                mistyped += 1
                if damaged is not None:
                    damaged(f"{kind}: {key}={_shown(value)} {problem}: left out")
    if mistyped and "warnings" in names:
        kwargs["warnings"] = (kwargs.get("warnings") or 0) + mistyped
    if unknown and "extra" in names:
        kwargs["extra"] = {**(kwargs.get("extra") or {}), **unknown}
    kwargs.pop("source", None)
    try:
        return cls(t=t, wall=wall, arm=arm, source=source, **kwargs)
    except TypeError:  # a required field missing: keep what was there rather than lose it
        if damaged is not None:
            damaged(f"{kind}: a required field is missing: kept as an unknown record")
        return UnknownEvent(t=t, wall=wall, arm=arm, source=source, name=str(kind), fields=kwargs)


def _clock(record: Mapping[str, Any], key: str, kind: Any, damaged: Callable | None) -> float:
    """An event's `t` or `wall`: a number in its range, else 0 (told to `damaged`)."""
    value: Any = record.get(key)
    if _is_number(value) and in_range(key, value):
        return float(value)
    if damaged is not None and value is not None:
        why = f"is outside {describe(key)}" if _is_number(value) else "is not a number"
        damaged(f"{kind}: {key}={_shown(value)} {why}: read as 0")
    return 0.0


def _problem(key: str, value: Any, spec: _FieldSpec) -> str | None:
    """Why a recorded field cannot be read as it is (None: it can)."""
    accepted, optional = spec
    if value is None:
        return None if optional else f"is not a {_wanted(accepted)}"
    if type(value) not in accepted:
        return f"is not a {_wanted(accepted)}"
    if _is_number(value) and not in_range(key, value):
        return f"is outside {describe(key)}"
    if key == "extra" and not all(isinstance(k, str) for k in value):
        return "is not a table of text"
    if key == "arms" and not all(isinstance(arm, dict) for arm in value):
        return "is not a list of objects"
    if key == "checks" and not all(isinstance(item, dict) for item in value):
        return "is not a list of objects"
    return None


def _normal(key: str, value: Any) -> Any:
    """A valid recorded value as the event holds it: arm-like names escaped, extra as text."""
    if key == "tag" and isinstance(value, str):
        return printable(value)
    if key == "extra":
        return {k: v if isinstance(v, str) else repr(v) for k, v in value.items()}
    if key == "arms" and isinstance(value, list):
        return tuple(value)  # the event is frozen: a tuple, as written
    if key == "checks":  # a preflight's checks: shown to people, so text and escaped
        return tuple({str(k): printable(v if isinstance(v, str) else repr(v))
                      for k, v in item.items()} for item in value)  # fmt: skip
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_TYPES: dict[str, frozenset[type]] = {
    "float": frozenset({int, float}),
    "int": frozenset({int}),
    "bool": frozenset({bool}),
    "str": frozenset({str}),
    "Phase": frozenset({str}),
    "Mapping[str, str]": frozenset({dict}),
    "tuple[Mapping[str, object], ...]": frozenset({list}),
    "tuple[Mapping[str, str], ...]": frozenset({list}),
    "float | str": frozenset({int, float, str}),
}
"""The JSON types a field of each type may hold, so that a damaged recording never puts text
where a reading belongs: the field is missing instead. null is read as null only where the
field may be None (`float | None`); elsewhere it is damage, as a wrong type is."""
_ANY = frozenset({int, float, bool, str, list, dict})
_FieldSpec = tuple[frozenset[type], bool]
"""The JSON types a field accepts, and whether it may be null."""
_ANY_FIELD: _FieldSpec = (_ANY, True)
_FIELD_TYPES: dict[type[Event], dict[str, _FieldSpec]] = {}


def _field_types(cls: type[Event]) -> dict[str, _FieldSpec]:
    """What each field of an event class accepts (looked up once per class)."""
    types = _FIELD_TYPES.get(cls)
    if types is None:
        types = _FIELD_TYPES[cls] = {}
        for f in dataclasses.fields(cls):
            hint = str(f.type)
            base = hint.removesuffix(" | None")
            types[f.name] = (_TYPES.get(base, _ANY), base != hint)
    return types


_THERMAL_INDEX: dict[Any, int] = {name: i for i, name in enumerate(THERMAL_NAMES)}


def _thermal(value: Any) -> int | None:
    if isinstance(value, str):
        return _THERMAL_INDEX.get(value.lower())
    return value if type(value) is int and 0 <= value < len(THERMAL_NAMES) else None


def _shown(value: Any) -> str:
    """A damaged value as a warning shows it: JSON, cut short, control characters escaped."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except ValueError:  # an integer too long to write out
        text = f"<an integer of {value.bit_length()} bits>" if isinstance(value, int) else "?"
    return printable(text if len(text) <= 40 else text[:40] + "…")


_JSON_KINDS = {str: "a string", float: "a number", int: "an integer", bool: "a boolean",
               list: "a list", dict: "an object"}  # fmt: skip


def shown_with_kind(value: Any) -> str:
    """A JSON value as a message shows it, with what it is: `"2" (a string)`, `null`."""
    if value is None:
        return "null"
    return f"{_shown(value)} ({_JSON_KINDS.get(type(value), type(value).__name__)})"


_WANTED = {frozenset({int, float}): "number", frozenset({int}): "whole number",
           frozenset({bool}): "true/false", frozenset({str}): "string",
           frozenset({dict}): "table of text", frozenset({list}): "list"}  # fmt: skip


def _wanted(types: frozenset[type]) -> str:
    return _WANTED.get(types, "value of its type")
