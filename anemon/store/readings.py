"""The host's readings of a session (TelemetryEvent), kept as rows of numbers:
`Session.telemetry`.

A pymobiledevice3 session reads power every second and the app's process every second: 86,400
readings in 12 hours, most of a big recording's events. Kept as event objects, each took
~300 bytes (its floats boxed one by one) and was one more object for every full garbage
collection to walk, so a headless replay's memory grew with the file three times faster than
its numbers. Here a reading is its 17 numbers in one array (136 bytes) and the index of its
texts (arm, source, battery state: a few combinations in a session), no object at all; an
event is made again when one is asked for, equal to the one added. A reading the numbers
cannot give back as it came (a NaN, a value of another type: a damaged recording's) is kept
as it came.
"""

from __future__ import annotations

import dataclasses
import math
import operator
from array import array
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from typing import Any, overload

import numpy as np

from anemon.events import TelemetryEvent

_TYPES = {f.name: str(f.type) for f in dataclasses.fields(TelemetryEvent)}
_FLOATS = tuple(name for name, kind in _TYPES.items() if kind in ("float", "float | None"))
_FLAGS = tuple(name for name, kind in _TYPES.items() if kind == "bool | None")
_INTS = tuple(name for name, kind in _TYPES.items() if kind == "int | None")
_TEXTS = tuple(name for name, kind in _TYPES.items() if kind in ("str", "str | None"))
assert {*_FLOATS, *_FLAGS, *_INTS, *_TEXTS} == set(_TYPES), "a TelemetryEvent field's type"
_NUMBERS = (*_FLOATS, *_FLAGS, *_INTS)
_WIDTH = len(_NUMBERS)
_NUMBER_VALUES = operator.attrgetter(*_NUMBERS)
_TEXT_VALUES = operator.attrgetter(*_TEXTS)
_BLANK = array("d", [math.nan]) * _WIDTH
_NO_TEXTS = (None,) * len(_TEXTS)


class Readings(Sequence[TelemetryEvent]):
    """TelemetryEvents in the order added; indexing and slicing give events."""

    def __init__(self) -> None:
        self._numbers = array("d")
        """Each reading's `_NUMBERS`, one row after another, NaN for None."""
        self._texts = array("I")
        """Each reading's index in `_said`."""
        self._said: dict[tuple[str | None, ...], int] = {}
        self._by_index: list[tuple[str | None, ...]] = []
        self._odd: dict[int, TelemetryEvent] = {}
        """Readings kept as they came, by index (their rows are NaN)."""
        self._released = 0
        """Readings whose rows were let go (`release`): the first held is this one."""

    def __len__(self) -> int:
        return self._released + len(self._texts)

    @property
    def held(self) -> int:
        """Readings whose rows are held (those since the last `release`)."""
        return len(self._texts)

    def release(self) -> None:
        """Let go of the rows held, keeping their count: a whole-file command's figures read
        them as they come (`EnergyReadings.update`) and need them no more (a 100 MB
        recording's were 55 MiB). Those readings cannot be asked for again (IndexError)."""
        self._released = len(self)
        self._numbers, self._texts, self._odd = array("d"), array("I"), {}

    def append(self, event: TelemetryEvent) -> None:
        numbers, texts = _NUMBER_VALUES(event), _TEXT_VALUES(event)
        at = len(self._numbers)
        try:
            if not _exact(event, numbers):
                raise TypeError
            self._numbers.extend([math.nan if v is None else v for v in numbers])
            hash(texts)  # a text that is not one (a list a reader let through)
        except TypeError:  # kept as it came (a row of NaN in its place)
            del self._numbers[at:]
            self._odd[len(self)] = event
            self._numbers.extend(_BLANK)
            texts = ()
        said = self._said.get(texts)
        if said is None:
            said = self._said[texts] = len(self._by_index)
            self._by_index.append(texts)
        self._texts.append(said)

    def put(self, block: Block) -> None:
        """`append` each reading of `block`, a block at a time."""
        self._numbers.extend(block.numbers)
        for combination in dict.fromkeys(block.texts):
            if combination not in self._said:
                self._said[combination] = len(self._by_index)
                self._by_index.append(combination)
        self._texts.extend(array("I", map(self._said.__getitem__, block.texts)))

    def _event(self, index: int) -> TelemetryEvent:
        odd = self._odd.get(index)
        if odd is not None:
            return odd
        if index < self._released:
            raise IndexError(f"reading {index} was released")
        held = index - self._released
        row = self._numbers[held * _WIDTH : (held + 1) * _WIDTH]
        fields: dict[str, Any] = dict(zip(_TEXTS, self._by_index[self._texts[held]], strict=True))
        for name, value in zip(_NUMBERS, row, strict=True):
            if value != value:
                fields[name] = None
            elif name in _FLAGS:
                fields[name] = bool(value)
            elif name in _INTS:
                fields[name] = int(value)
            else:
                fields[name] = value
        return TelemetryEvent(**fields)

    @overload
    def __getitem__(self, index: int) -> TelemetryEvent: ...

    @overload
    def __getitem__(self, index: slice) -> list[TelemetryEvent]: ...

    def __getitem__(self, index: int | slice) -> TelemetryEvent | list[TelemetryEvent]:
        if isinstance(index, slice):
            return [self._event(i) for i in range(*index.indices(len(self)))]
        if not -len(self) <= index < len(self):
            raise IndexError("reading index out of range")
        return self._event(index % len(self))

    def __iter__(self) -> Iterator[TelemetryEvent]:
        return map(self._event, range(len(self)))

    def columns(
        self, start: int = 0, stop: int | None = None, names: Collection[str] | None = None
    ) -> Columns:
        """The readings from `start` to `stop` (the last) as columns, no event made: what a
        whole-file figure reads (EnergyReadings: 85,000 readings of a 20 MB recording made as
        events were half its summary's CPU), and an export a part at a time. `names`: only
        these fields' columns (an export's time order reads the times alone)."""
        if start < self._released:
            raise IndexError(f"readings before {self._released} were released")
        stop = len(self) if stop is None else min(stop, len(self))
        first, last = start - self._released, max(start, stop) - self._released
        flat = np.frombuffer(self._numbers, dtype=np.float64)[first * _WIDTH : last * _WIDTH]
        rows = flat.reshape(last - first, _WIDTH)
        if names is None:  # copies: the array may grow after
            numbers = dict(zip(_NUMBERS, rows.T.copy(), strict=True))
        else:
            numbers = {name: rows[:, k].copy() for k, name in enumerate(_NUMBERS) if name in names}
        del flat, rows  # its buffer released: an array exporting one cannot grow
        wanted = [(k, name) for k, name in enumerate(_TEXTS) if names is None or name in names]
        texts = self._text_columns(first, last, wanted) if wanted else {}
        odd = {i - start: event for i, event in self._odd.items() if start <= i < stop}
        return Columns(numbers, texts, odd)

    def _text_columns(
        self, first: int, last: int, wanted: list[tuple[int, str]]
    ) -> dict[str, np.ndarray]:
        """The `wanted` text fields (their place in _TEXTS, their name) of the held rows from
        `first` to `last`."""
        said = np.frombuffer(self._texts, dtype=f"u{self._texts.itemsize}")[first:last].copy()
        combinations = [texts or _NO_TEXTS for texts in self._by_index]  # () for an odd one
        return {name: np.array([c[k] for c in combinations] or [None], dtype=object)[said]
                for k, name in wanted}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Block:
    """TelemetryEvents made into their rows before any is kept (`Readings.put`): `of` gives
    None where `Readings.append` would keep one as it came (`_exact`)."""

    events: Sequence[TelemetryEvent]
    numbers: array
    """Their `_NUMBERS`, one row after another, NaN for None."""
    texts: list[tuple[str | None, ...]]

    @property
    def count(self) -> int:
        return len(self.events)

    @classmethod
    def of(cls, events: Sequence[TelemetryEvent]) -> Block | None:
        if not all(type(event) is TelemetryEvent for event in events):
            return None
        columns = []
        for name in _NUMBERS:  # a column at a time: most of a reading's fields are None
            items = field_values(events, name)
            nones = items.count(None)
            if nones and name in ("t", "wall"):
                return None
            try:
                column = _column(items, nones)
            except (TypeError, ValueError, OverflowError):  # not a number array("d") takes
                return None
            if np.count_nonzero(np.isnan(column)) != nones:
                return None  # a NaN (kept as it came)
            columns.append(column)
        texts = list(map(_TEXT_VALUES, events))
        try:
            dict.fromkeys(texts)
        except TypeError:  # a text that is not one (a list a reader let through)
            return None
        rows = np.column_stack(columns) if events else np.empty((0, _WIDTH))
        return cls(events, array("d", rows.tobytes()), texts)

    def values(self, name: str) -> list[Any]:
        """Each reading's field `name`, in order."""
        return field_values(self.events, name)

    def present(self, name: str) -> tuple[array, array]:
        """The times and values of field `name` where it is not None (`present`)."""
        return present(self.values("t"), self.values(name))


@dataclass(frozen=True, slots=True)
class Columns:
    """Readings as columns: each number field's values (NaN for None; a flag 1.0 or 0.0),
    each text field's, and the readings kept as they came (their numbers NaN, their texts
    None) by their place in the columns."""

    numbers: dict[str, np.ndarray]
    texts: dict[str, np.ndarray]
    """Each text field's values (an array of objects: str or None)."""
    odd: dict[int, TelemetryEvent]


def field_values(events: Sequence[Any], name: str) -> list[Any]:
    """Each event's field `name`, in order."""
    return list(map(operator.attrgetter(name), events))


def present(t: list[Any], items: list[Any]) -> tuple[array, array]:
    """The times and values a `Series.append` for each pair keeps (the values not None), as
    arrays (raising where `append` would: a value not a number)."""
    kept = list(map(operator.is_not, items, repeat(None)))
    return array("d", compress(t, kept)), array("d", compress(items, kept))


def _column(items: list[Any], nones: int) -> np.ndarray:
    """Values as `Readings.append` puts them (NaN for None); raises where it would not."""
    if nones == len(items):
        return np.full(len(items), math.nan)
    if not nones:
        return np.frombuffer(array("d", items))
    return np.frombuffer(array("d", [math.nan if v is None else v for v in items]))


def _exact(event: TelemetryEvent, numbers: tuple[Any, ...]) -> bool:
    """Whether the event's numbers come back from its row as they are: not a NaN, `t` and
    `wall` not None (what is not a number at all, the row's array refuses). The recording's
    codec and the backends give each field its type: a flag is a bool, a pid an int."""
    return (
        type(event) is TelemetryEvent
        and numbers[0] is not None
        and numbers[1] is not None
        and all(map(operator.eq, numbers, numbers))  # NaN is not equal to itself
    )
