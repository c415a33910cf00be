"""llama-bench's results (llama.cpp `tools/llama-bench`, `-o json`, `-o jsonl` or `-o csv`):
each test an arm, its repetitions its timed trials (docs/spec/llama-bench.md).

A test's `samples_ts` are the rates of its repetitions (tokens over each repetition's
`samples_ns`): prefill for a pp test (`n_gen` 0), decode for a tg test (`n_prompt` 0); a
pp+tg test's rate is over both, and is kept as decode. The CSV has only the mean (`avg_ts`):
one trial each. Every field that becomes none of an event's is kept as text (START `extra`).
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

from anemon.events import EndEvent, Event, StartEvent
from anemon.parsing.ranges import in_range
from anemon.recording.foreign.base import (
    MAX_LINE,
    ForeignFormat,
    Line,
    Warn,
    epoch,
    json_line,
    kept_text,
)
from anemon.text import printable

if TYPE_CHECKING:
    from anemon.parsing.columnar import TrialRun

_SNIFF_JSON = re.compile(rb'^\s*[\[{]\s*\{?\s*"(?:build_commit|build_number|cpu_info)"\s*:')
_SNIFF_CSV = re.compile(rb"^\W*build_commit\W*,(?=[^\n]*\bn_prompt\b)(?=[^\n]*\bavg_ts\b)")
MEASURED = frozenset(
    {"test_time", "avg_ns", "stddev_ns", "avg_ts", "stddev_ts", "samples_ns", "samples_ts"}
)
"""A test's results, not its configuration: never part of an arm's name."""
DESCRIBED = frozenset(
    {"build_commit", "build_number", "cpu_info", "gpu_info", "model_filename", "model_type",
     "model_size", "model_n_params", "n_prompt", "n_gen", "n_depth"}
)  # fmt: skip
"""Said by the arm's name or the machine, never a difference between two tests' names."""
_CPU_BACKENDS = frozenset({"cpu", "blas", ""})


def sniff(head: bytes) -> bool:
    """A JSON array or JSON lines of objects that begin with llama-bench's build fields, or
    its CSV header."""
    return _SNIFF_JSON.match(head) is not None or _SNIFF_CSV.match(head) is not None


@dataclass(frozen=True, slots=True)
class _Test:
    """One test's object and the line it begins on."""

    line: int
    values: Mapping[str, Any]


def read(lines: Iterator[Line], warn: Warn, source: str) -> Iterator[Event | TrialRun]:
    """Every test's arm, the tests laid one after another in session time. The tests are
    read first (a file is small): an arm's name says what sets it apart from the others."""
    tests = list(_tests(lines, warn))
    varying = _varying(tests)
    t = 0.0
    for test in tests:
        arm = _Arm.of(test, varying, _Field(test.line, warn))
        yield from arm.events(t, source)
        t = arm.end(t)


def _tests(lines: Iterator[Line], warn: Warn) -> Iterator[_Test]:
    first = next(lines, None)
    while first is not None and not first.text.strip():
        first = next(lines, None)
    if first is None:
        return
    start = first.text.lstrip()[:1]
    if start == "[":
        yield from _array([first, *lines], warn)
    elif start == "{":
        yield from _json_lines([first, *lines], warn)
    else:
        yield from _csv([first, *lines], warn)


def _json_lines(lines: Sequence[Line], warn: Warn) -> Iterator[_Test]:
    for line in lines:
        value = json_line(line, warn)
        if value is None:
            continue
        if isinstance(value, dict):
            yield _Test(line.number, value)
        else:
            warn(line.number, "not a JSON object: the line is skipped")


def _array(lines: Sequence[Line], warn: Warn) -> Iterator[_Test]:
    """The array's objects, each with the line it begins on; where the JSON breaks, a
    warning and the rest skipped."""
    cut = next((line for line in lines if line.cut), None)
    if cut is not None:
        warn(cut.number, "a line longer than this format reads: the file is skipped")
        return
    text = "\n".join(line.text for line in lines)
    first = lines[0].number
    decoder = json.JSONDecoder()
    at = text.index("[") + 1
    while True:
        at = _skip(text, at)
        if at >= len(text) or text[at] == "]":
            return
        try:
            value, end = decoder.raw_decode(text, at)
        except ValueError:
            line = first + text.count("\n", 0, at)
            warn(line, "not JSON from here on (cut short or damaged): the rest is skipped")
            return
        line = first + text.count("\n", 0, at)
        if isinstance(value, dict):
            yield _Test(line, value)
        else:
            warn(line, "an element of the array is not a JSON object: skipped")
        at = end


def _skip(text: str, at: int) -> int:
    """Past whitespace and one comma."""
    while at < len(text) and text[at] in " \t\r\n,":
        at += 1
    return at


def _csv(lines: Sequence[Line], warn: Warn) -> Iterator[_Test]:
    rows = csv.reader(line.text for line in lines)
    header = next(rows, None)
    if header is None:
        return
    for line, row in zip(lines[1:], rows, strict=False):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            warn(line.number, f"{len(row)} fields where the header has {len(header)}: skipped")
            continue
        yield _Test(line.number, dict(zip(header, (_csv_value(c) for c in row), strict=True)))


def _csv_value(cell: str) -> Any:
    """A CSV cell as JSON would have it: a number where it is one, else the text."""
    try:
        return int(cell)
    except ValueError:
        pass
    try:
        return float(cell)
    except ValueError:
        return cell


def _varying(tests: Sequence[_Test]) -> tuple[str, ...]:
    """The configuration keys whose values differ between the file's tests, in order."""
    keys: dict[str, set[str]] = {}
    for test in tests:
        for key, value in test.values.items():
            if key not in MEASURED and key not in DESCRIBED:
                keys.setdefault(key, set()).add(json.dumps(value, sort_keys=True))
    present = [key for key in keys if all(key in test.values for test in tests)]
    return tuple(key for key in present if len(keys[key]) > 1)


@dataclass(frozen=True, slots=True)
class _Field:
    line: int
    warn: Warn

    def count(self, values: Mapping[str, Any], key: str) -> int:
        value = values.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int) or not in_range("gen", value):
            self.warn(self.line, f"{key}: {str(value)[:40]!r} is not a count: taken as 0")
            return 0
        return value

    def samples(
        self, values: Mapping[str, Any], key: str, field: str, unit: float = 1.0
    ) -> list[float]:
        """The list (a lone number for the CSV's mean) times `unit`, its values outside
        `field`'s range warned and left out."""
        raw = values.get(key)
        items = raw if isinstance(raw, list) else [] if raw is None else [raw]
        numbers = (
            x * unit for x in items if isinstance(x, int | float) and not isinstance(x, bool)
        )
        good = [float(x) for x in numbers if in_range(field, x)]
        if len(good) != len(items):
            self.warn(self.line, f"{key}: {len(items) - len(good)} of {len(items)} values "
                                 "are not a rate or a duration: left out")  # fmt: skip
        return good


@dataclass(frozen=True, slots=True)
class _Arm:
    name: str
    test: _Test
    n_prompt: int
    n_gen: int
    rates: list[float]
    seconds: list[float]

    @classmethod
    def of(cls, test: _Test, varying: Sequence[str], f: _Field) -> _Arm:
        v = test.values
        n_prompt, n_gen, depth = f.count(v, "n_prompt"), f.count(v, "n_gen"), f.count(v, "n_depth")
        shape = "+".join(
            part for part in (f"pp{n_prompt}" if n_prompt else "", f"tg{n_gen}" if n_gen else "")
            if part
        ) or "no test"  # fmt: skip
        if depth:
            shape += f" @ d{depth}"
        words = [_model(v), shape, *(f"{key}={kept_text(v.get(key))}" for key in varying)]
        rates = f.samples(v, "samples_ts" if "samples_ts" in v else "avg_ts", "decode_tps")
        seconds = f.samples(v, "samples_ns" if "samples_ns" in v else "avg_ns", "app_t", 1e-9)
        seconds = seconds if len(seconds) == len(rates) else [1.0] * len(rates)
        return cls(printable(" ".join(words)), test, n_prompt, n_gen, rates, seconds)

    def end(self, t: float) -> float:
        return t + sum(self.seconds)

    def events(self, t: float, source: str) -> Iterator[Event | TrialRun]:
        import numpy as np

        from anemon.parsing.columnar import TrialRun

        v = self.test.values
        wall = epoch(v.get("test_time"))
        offset = (wall if wall is not None else 0.0) - t
        yield StartEvent(t=t, wall=t + offset, model=_model(v), compute=_compute(v),
                         p=self.n_prompt, g=self.n_gen, n=len(self.rates),
                         extra=_extra(v), arm=self.name, source=source)  # fmt: skip
        count = len(self.rates)
        ends = t + np.cumsum(self.seconds) if count else np.zeros(0)
        rates = np.array(self.rates, dtype=float)
        none = np.full(count, np.nan)
        prefill = self.n_gen == 0
        columns = {
            "trial": np.arange(count, dtype=float), "warmup": np.zeros(count),
            "app_t": ends - t, "wall": ends + offset,
            "prompt_tps": rates if prefill else none, "decode_tps": none if prefill else rates,
            "prompt_tokens": np.full(count, float(self.n_prompt)) if self.n_prompt else none,
            "gen": np.full(count, float(self.n_gen)) if self.n_gen else none,
        }  # fmt: skip
        if count:
            yield TrialRun(self.name, ends, columns)
        end = self.end(t)
        yield EndEvent(
            t=end, wall=end + offset, reason="done", trials=count, arm=self.name, source=source
        )


def _model(values: Mapping[str, Any]) -> str:
    """The model as llama-bench's table names it (`model_type`), else its file's name."""
    kind = values.get("model_type")
    if isinstance(kind, str) and kind:
        return printable(kind)
    path = values.get("model_filename")
    return printable(PurePath(path).name) if isinstance(path, str) and path else "unknown model"


def _compute(values: Mapping[str, Any]) -> str:
    """ "cpu" where nothing is offloaded (CPU or BLAS alone, or no layer on the GPU), else
    "gpu" (Metal, CUDA, Vulkan, ...)."""
    backends = str(values.get("backends", values.get("backend", ""))).lower()
    on_cpu = {b.strip() for b in backends.split(",")} <= _CPU_BACKENDS
    return "cpu" if on_cpu or values.get("n_gpu_layers") == 0 else "gpu"


def _extra(values: Mapping[str, Any]) -> dict[str, str]:
    return {
        kept_text(str(key)): kept_text(value)
        for key, value in values.items()
        if key not in ("samples_ts", "samples_ns", "model_type")
    }


FORMAT = ForeignFormat(
    kind="llama-bench",
    looked_for="llama-bench's -o json, jsonl or csv",
    sniff=sniff,
    read=read,
    max_line=MAX_LINE,
)
