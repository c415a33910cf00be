"""Events to and from the JSON objects of a recording line."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from typing import Any

from anemon.events import EVENT_TYPES, THERMAL_NAMES, Event, UnknownEvent, thermal_name

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
        return {"kind": event.name, **event.fields}
    record: dict[str, Any] = {"kind": event.kind}
    for name in _field_names(type(event)):
        value = getattr(event, name)
        if name in _THERMAL_FIELDS:
            value = thermal_name(value)
        elif name == "extra":
            value = dict(value) if value else None
        if (value is not None and value != "" and name not in _OMIT) or name in (
            "t",
            "wall",
            "arm",
        ):
            record[name] = value
    return record


def from_record(
    record: Mapping[str, Any], source: str = "", damaged: Callable[[str], None] | None = None
) -> Event:
    """An event from a recorded object; unknown kinds and fields are kept, never dropped.

    A field with the wrong JSON type (a damaged recording) is left out, counted in the
    event's `warnings` where it has them, and told to `damaged` (what was wrong, one call each).
    """
    kind = record.get("kind")
    cls = EVENT_TYPES.get(kind) if isinstance(kind, str) else None
    t = _number(record.get("t"))
    wall = _number(record.get("wall"))
    if damaged is not None and (not t or not wall):
        for key in ("t", "wall"):
            value = record.get(key)
            if value is not None and not _number(value) and value != 0:
                damaged(f"{kind}: {key}={_shown(value)} is not a number: read as 0")
    arm = record.get("arm") if isinstance(record.get("arm"), str) else None
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
        if key in names:
            if key in _THERMAL_FIELDS:
                kwargs[key] = thermal = _thermal(value)
                if thermal is None and value is not None and damaged is not None:
                    damaged(f"{kind}: {key}={_shown(value)} is not a thermal state: left out")
            elif value is None or type(value) in types.get(key, _ANY):
                kwargs[key] = value
            else:  # a damaged recording: the field is missing, as an unparsable log value
                mistyped += 1
                if damaged is not None:
                    wanted = _wanted(types.get(key, _ANY))
                    damaged(f"{kind}: {key}={_shown(value)} is not a {wanted}: left out")
        else:
            unknown[key] = value if isinstance(value, str) else repr(value)
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


_TYPES: dict[str, frozenset[type]] = {
    "float": frozenset({int, float}),
    "int": frozenset({int}),
    "bool": frozenset({bool}),
    "str": frozenset({str}),
}
"""The JSON types a field of each scalar type may hold (null is always read as null), so that
a damaged recording never puts text where a reading belongs: the field is missing instead."""
_ANY = frozenset({int, float, bool, str, list, dict})
_FIELD_TYPES: dict[type[Event], dict[str, frozenset[type]]] = {}


def _field_types(cls: type[Event]) -> dict[str, frozenset[type]]:
    """The JSON types each scalar field of an event class accepts (looked up once per class)."""
    types = _FIELD_TYPES.get(cls)
    if types is None:
        types = _FIELD_TYPES[cls] = {}
        for f in dataclasses.fields(cls):
            base = str(f.type).removesuffix(" | None")
            if base in _TYPES:
                types[f.name] = _TYPES[base]
    return types


_THERMAL_INDEX: dict[Any, int] = {name: i for i, name in enumerate(THERMAL_NAMES)}


def _thermal(value: Any) -> int | None:
    if isinstance(value, str):
        return _THERMAL_INDEX.get(value.lower())
    return value if isinstance(value, int) and 0 <= value < len(THERMAL_NAMES) else None


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _shown(value: Any) -> str:
    """A damaged value as a warning shows it: JSON, cut short."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 40 else text[:40] + "…"


_WANTED = {frozenset({int, float}): "number", frozenset({int}): "whole number",
           frozenset({bool}): "true/false", frozenset({str}): "string"}  # fmt: skip


def _wanted(types: frozenset[type]) -> str:
    return _WANTED.get(types, "value of its type")
