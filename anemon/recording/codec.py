"""Events to and from the JSON objects of a recording line."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Mapping
from typing import Any, cast

import orjson

from anemon.events import (
    EVENT_TYPES,
    THERMAL_NAMES,
    Check,
    CheckStatus,
    Event,
    UnknownEvent,
    thermal_name,
)
from anemon.parsing.ranges import FINITE, RANGES, describe, in_range
from anemon.parsing.values import to_battery_state
from anemon.text import printable

FORMAT = "anemon-recording"
"""A recording's header says `"format": FORMAT`: how the reader tells one from a raw log."""
VERSION = 2
"""2: a recording that closed normally ends with a `summary` event (version 1 files still read)."""
SESSION_KIND = "session"
"""The kind of the line that starts a session appended to an existing recording (`append`):
the new session's header fields; the reader keeps it as an unknown kind."""

_THERMAL_FIELDS = frozenset({"thermal"})
_SOURCED = frozenset({"telemetry", "gap"})
"""The kinds whose `source` is recorded (v3): the host's readings and the app's (DVT), a gap
of the log and one of a stream about the app, are told apart after replay. Every other event's
source is the file it is read from."""


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
        return {"kind": event.name, **finite(event.fields)}
    record: dict[str, Any] = {"kind": event.kind}
    sourced = event.kind in _SOURCED
    for name in _field_names(type(event)):
        value = getattr(event, name)
        if type(value) is float and not math.isfinite(value):
            value = None  # JSON has no NaN or Infinity: a reading that is not one is missing
        if name in _THERMAL_FIELDS:
            value = _thermal_name(value)
        elif name == "extra":
            value = dict(value) if value else None
        elif name == "checks":
            value = [_check_record(check) for check in value]
        elif isinstance(value, tuple):  # a summary's arms: NaN inside is null too
            value = finite(value)
        if (value is not None and value != "" and (sourced or name != "source")) or name in (
            "t",
            "wall",
            "arm",
        ):
            record[name] = value
    return record


def _check_record(check: Check) -> dict[str, str]:
    """A pre-flight check as a recording holds it: all four fields, in their order."""
    return {"check": check.check, "status": check.status, "reading": check.reading,
            "note": check.note}  # fmt: skip


def _thermal_name(value: Any) -> str | None:
    """A thermal state's name; a value no state has is left out rather than raise."""
    return thermal_name(value) if _thermal(value) == value and value is not None else None


def finite(value: Any) -> Any:
    """`value` with every NaN or infinity in it (in lists and mappings too) made null: strict
    JSON has no such numbers, and a reader would choke on Python's `NaN`."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


_INT_DIGITS = 4000
"""Longer integers are read as floats (infinite): Python's int() refuses past 4300 digits, which
would lose the whole line for one field; an infinite value is then left out by its range."""


def _parse_int(text: str) -> int | float:
    return int(text) if len(text) <= _INT_DIGITS else float(text)


_EXACT = 2.0**63
"""orjson reads an integer past 64 bits as a float (json: an int); a float this large or
larger may be one, so its line is read by json."""


def decode(text: str) -> Any:
    """One recording line's JSON; a number of any size is read (and judged later by its range).

    orjson reads the common line, a flat object (several times faster than json); a line it
    refuses (NaN, Infinity, a lone surrogate, ...), one with a float of 2**63 or more (maybe
    a long integer) and one with a nested list or object are read by json, so what is
    accepted and what it gives are json's, exactly.
    Raises ValueError for text that is not JSON, as json.loads does."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        pass  # json decides: it accepts NaN and big numbers, and says why it refuses
    else:
        if _flat(value):
            return value
    return json.loads(text, parse_int=_parse_int)


def _flat(value: Any) -> bool:
    """`value` as orjson read it is as json reads it: an object or scalar without a nested
    list or object (not looked into) and without a float that may have been an integer."""
    for item in value.values() if type(value) is dict else (value,):
        kind = type(item)
        if kind is float:
            if not -_EXACT < item < _EXACT:
                return False
        elif kind is dict or kind is list:
            return False
    return True


def read_fast(text: str, source: str = "") -> Event | None:
    """`from_record(decode(text), source)` for a line of a common shape with a `t` and every
    value valid (most of a recording), several times faster; None for any other line (then
    decode and from_record read it, and tell what is wrong)."""
    try:
        record = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    if type(record) is not dict or record.get("t") is None:
        return None  # no `t`: the reader places it
    return _fast(record, source)


def from_record(
    record: Mapping[str, Any], source: str = "", damaged: Callable[[str], None] | None = None
) -> Event:
    """An event from a recorded object; unknown kinds and fields are kept, never dropped.

    A field with the wrong JSON type (a damaged recording) is left out, counted in the
    event's `warnings` where it has them, and told to `damaged` (what was wrong, one call each).
    """
    if type(record) is dict:
        event = _fast(record, source)
        if event is not None:
            return event
    return _from_record(record, source, damaged)


Setter = Callable[[Event, Any], None]
_Check = tuple[str, Setter, frozenset[type], bool, float, float, Callable[[Any], Any] | None]
"""A field of a fast plan: its key, what sets it on a new event, the JSON types it takes,
whether it may be null, its range, and for a word of a closed set (a thermal state, a
battery state) what reads it (None: no such word)."""
_Plan = tuple[
    type[Event], tuple[tuple[Setter, Any], ...], tuple[Setter, ...], tuple[_Check, ...], bool
]
"""An event class, its absent fields' setters and defaults, the setters of t, wall, arm and
source, the checks of the fields present, and whether the record has its own source."""
_PLANS: dict[tuple[Any, ...], _Plan | None] = {}
_MAX_PLANS = 256
"""Shapes remembered (a hostile recording could have a new one on every line)."""
_CLOCKS = ("kind", "t", "wall", "arm")
_SLOW_KEYS = frozenset({"tag", "extra", "arms", "checks", "source"})
"""Fields whose values are rewritten (`_normal`) or dropped: always the general path (but a
`source` of the kinds that keep theirs, `_SOURCED`)."""
_ARMS: dict[str, str] = {}
"""Arm names and sources as events hold them (escaped), for the few of a recording."""
_new = object.__new__


def _fast(record: dict[str, Any], source: str) -> Event | None:
    """The event of a record of a common shape whose every value is valid, else None (then
    the general path reads it, tells what was wrong, and gives the very same event).

    The event is made without its dataclass __init__ (a frozen class sets each of its ~20
    fields through object.__setattr__): every field is set through its slot, the absent ones
    to their defaults, so the event is equal to the one __init__ makes (a test checks it)."""
    kind = record.get("kind")
    if type(kind) is not str:
        return None
    shape = (kind, *record)
    try:
        plan = _PLANS[shape]
    except KeyError:
        plan = _plan(shape)
        if len(_PLANS) >= _MAX_PLANS:
            _PLANS.clear()
        _PLANS[shape] = plan
    if plan is None:
        return None
    cls, defaults, (set_t, set_wall, set_arm, set_source), checks, sourced = plan
    # t and wall checked inline, not through a helper: two calls per event of a 1M-event load
    t = record.get("t", 0.0)  # missing: 0, as _clock reads it
    if (type(t) is float or type(t) is int) and _T_LOW <= t <= _T_HIGH:
        t = float(t)
    elif t is not None:
        return None
    else:
        t = 0.0
    wall = record.get("wall", 0.0)
    if (type(wall) is float or type(wall) is int) and _WALL_LOW <= wall <= _WALL_HIGH:
        wall = float(wall)
    elif wall is not None:
        return None
    else:
        wall = 0.0
    arm = record.get("arm")
    if type(arm) is str:
        arm = _ARMS.get(arm) or _arm(arm)
    elif arm is not None:
        return None
    if sourced:
        recorded = record["source"]
        if type(recorded) is not str:
            return None
        source = (_ARMS.get(recorded) or _arm(recorded)) if recorded else source
    event = _new(cls)
    for key, setter, accepted, optional, low, high, named in checks:
        value = record[key]
        if named is not None:
            value = named(value)
            if value is None and record[key] is not None:
                return None
        elif value is None:
            if not optional:
                return None
        elif type(value) not in accepted or (
            (type(value) is float or type(value) is int) and not low <= value <= high
        ):
            return None
        setter(event, value)
    for setter, value in defaults:
        setter(event, value)
    set_t(event, t)
    set_wall(event, wall)
    set_arm(event, arm)
    set_source(event, source)
    return event


def _plan(shape: tuple[Any, ...]) -> _Plan | None:
    """How to read records of a shape (kind, keys in order) quickly; None: not this way."""
    kind, keys = shape[0], shape[1:]
    cls = EVENT_TYPES.get(kind)
    if cls is None or hasattr(cls, "__post_init__"):
        return None
    fields = {f.name: f for f in dataclasses.fields(cls)}
    types = _field_types(cls)
    checks: list[_Check] = []
    sourced = False
    for key in keys:
        if key in _CLOCKS:
            continue
        if key == "source" and kind in _SOURCED:
            sourced = True
            continue
        if key not in fields or key in _SLOW_KEYS:
            return None  # unknown fields go to `extra`: the general path
        accepted, optional = types[key]
        bounds = RANGES.get(key, FINITE)
        # No list or object, no number of 2**63 or more: orjson reads these as json does
        checks.append((key, _setter(cls, key), accepted - _NESTED, optional,
                       max(bounds.low, -_FAST_LIMIT), min(bounds.high, _FAST_LIMIT),
                       _NAMED.get(key)))  # fmt: skip
    defaults: list[tuple[Setter, Any]] = []
    for name, f in fields.items():
        if name in keys or name in _CLOCKS or name == "source":
            continue
        if f.default is not dataclasses.MISSING:
            defaults.append((_setter(cls, name), f.default))
        elif f.default_factory is not dataclasses.MISSING and (
            (value := f.default_factory()) is f.default_factory()  # a shared, immutable one
        ):
            defaults.append((_setter(cls, name), value))
        else:  # a required field missing, or a fresh default each time: the general path
            return None
    clocks = tuple(_setter(cls, name) for name in ("t", "wall", "arm", "source"))
    return cls, tuple(defaults), clocks, tuple(checks), sourced


_NESTED = frozenset({list, dict})
_FAST_LIMIT = 9.2e18
"""Below 2**63: a number the fast path takes is one orjson and json read alike."""


def _setter(cls: type[Event], name: str) -> Setter:
    """What sets field `name` of a new `cls` event: its slot's descriptor."""
    setter: Setter = getattr(cls, name).__set__
    return setter


_T_LOW, _T_HIGH = RANGES["t"].low, RANGES["t"].high
_WALL_LOW, _WALL_HIGH = RANGES["wall"].low, RANGES["wall"].high


def _arm(name: str) -> str:
    shown = printable(name)
    if len(_ARMS) >= _MAX_PLANS:
        _ARMS.clear()
    _ARMS[name] = shown
    return shown


def _from_record(
    record: Mapping[str, Any], source: str, damaged: Callable[[str], None] | None
) -> Event:
    """from_record for any record: each field checked, and any damage told."""
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
        elif key in _NAMED:
            kwargs[key] = named = _NAMED[key](value)
            if named is None and value is not None and damaged is not None:
                damaged(f"{kind}: {key}={_shown(value)} is not a {_NAMED_WHAT[key]}: left out")
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
    recorded = kwargs.pop("source", None)
    if recorded and kind in _SOURCED:
        source = printable(recorded)  # a str: `_problem` left out any other
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
    if key == "checks":
        return tuple(_check(item) for item in value)
    return value


def _check(item: Mapping[str, Any]) -> Check:
    """A recorded pre-flight check. Shown to people, so text and escaped; a field a damaged
    recording left out reads as "?" (the check, its verdict) or "" (the reading, the note),
    and a verdict this version does not know is kept as it was (`CheckStatus`)."""

    def text(key: str, missing: str) -> str:
        value = item.get(key, missing)
        return printable(value if isinstance(value, str) else repr(value))

    status = cast(CheckStatus, text("status", "?"))
    return Check(text("check", "?"), status, text("reading", ""), text("note", ""))


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
    "tuple[Check, ...]": frozenset({list}),
    "CheckStatus": frozenset({str}),
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
    if type(value) is str:
        return _THERMAL_INDEX.get(value.lower())
    return value if type(value) is int and 0 <= value < len(THERMAL_NAMES) else None


def _battery_state(value: Any) -> str | None:
    """A protocol battery state, read as the parser reads it; else None (the store keeps a
    trial's state as one of these: a damaged recording's other word is told, not kept)."""
    return to_battery_state(value) if type(value) is str else None


_NAMED: dict[str, Callable[[Any], Any]] = {"thermal": _thermal, "battery_state": _battery_state}
"""Fields holding a word of a closed set, and what reads each (None: not one of them)."""
_NAMED_WHAT = {"thermal": "thermal state", "battery_state": "battery state"}


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
