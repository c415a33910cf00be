"""Yardstick's result JSONL (john-rocky/apple-silicon-llm-bench): one run per line, each an
arm (docs/spec/yardstick.md says what each field becomes and what is dropped).

A run's `metrics.decodeRateRollingWindow[k]` is its decode rate over the 5 s window ending
5 + k seconds after its first token, one a second (BenchmarkRunner.rollingDecodeRate); each
sample becomes one timed decode trial at its own time, so the sustained figures come from
them by anemon's own rules. A 0 is a window without tokens: no sample, not a zero rate. What
the run reports as a whole (tokens, thermal start/peak/end, energy) becomes a ReportEvent.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from anemon.events import (
    THERMAL_NAMES,
    EndEvent,
    Event,
    LoadEvent,
    ReportEvent,
    StartEvent,
)
from anemon.parsing.ranges import describe, in_range
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
    import numpy as np

    from anemon.parsing.columnar import TrialRun

WINDOW_S = 5.0
"""The rolling window's length: sample k ends 5 + k s after the first token."""
COMPUTE = {
    "coreml-llm": "ane",
    "core-ai": "ane",
    "anemll": "ane",
    "mlx-swift": "gpu",
    "llama.cpp": "gpu",
    "litert-lm": "gpu",
}
"""The compute of each runtime, unless the model names its own ("Core AI, GPU")."""
_NAMED_COMPUTE = re.compile(r"\b(ane|gpu|cpu)\b")
DONE_STOPS = frozenset({"length", "stop"})
"""stopReason of a run that ended by itself: its last call hit its token cap or its end of
sequence. "cancelled" is aborted; anything else ("error") failed."""
_SNIFF_METRICS = re.compile(rb'"metrics"\s*:\s*\{')
_SNIFF_KEY = re.compile(rb'"(?:decodeRateRollingWindow|decodeTokensPerSecond|runtime|device)"\s*:')
_USED = {
    "top": {"runtime", "model", "task", "timestamp", "metrics"},
    "metrics": {
        "decodeRateRollingWindow", "decodeTokensPerSecond", "promptTokensPerSecond",
        "promptTokenCount", "generatedTokenCount", "firstTokenLatencyMS", "loadTimeSeconds",
        "memoryAfterLoadMB", "coldRun", "stopReason", "initialThermalState",
        "peakThermalState", "finalThermalState", "energyJoules", "energyJoulesPerToken",
        "averagePackagePowerW", "batteryDeltaPercent", "energySource",
        "totalGenerationTimeSeconds",
    },
}  # fmt: skip
"""What becomes an event's field; every other key is kept as text (START's `extra`)."""


def sniff(head: bytes) -> bool:
    """A JSON object whose `metrics` is an object, with a Yardstick key in sight."""
    return (
        head.lstrip()[:1] == b"{"
        and _SNIFF_METRICS.search(head) is not None
        and _SNIFF_KEY.search(head) is not None
    )


def read(lines: Iterator[Line], warn: Warn, source: str) -> Iterator[Event | TrialRun]:
    """Each result line's events, the runs laid one after another in session time."""
    clock = _Clock()
    first_task: str | None = None
    for line in lines:
        record = json_line(line, warn)
        if record is None:
            continue
        if not isinstance(record, dict):
            warn(line.number, "not a JSON object: the line is skipped")
            continue
        run = _Run.of(record, _Field(line.number, warn))
        if run is None:
            continue
        first_task = run.task if first_task is None else first_task
        yield from run.events(clock, source, run.task != first_task)


@dataclass(frozen=True, slots=True)
class _At:
    """Where one run's events happen: its arm, and its session times on the epoch."""

    arm: str
    source: str
    base: float
    """Session time of its START."""
    wall0: float
    """Epoch time of its START."""

    def __call__(self, t: float) -> dict[str, Any]:
        """An event's place at session time `t`."""
        return {"t": t, "wall": self.wall0 + t - self.base, "arm": self.arm, "source": self.source}


class _Clock:
    """Where the next run begins in session time, and its epoch time."""

    def __init__(self) -> None:
        self.t = 0.0
        self.wall: float | None = None


@dataclass(frozen=True, slots=True)
class _Field:
    """Reads one line's values, each through its range; a bad one is warned and left out."""

    line: int
    warn: Warn

    def number(self, values: Mapping[str, Any], key: str, field: str) -> float | None:
        value = values.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.warn(self.line, f"{key}: {_shown(value)} is not a number: left out")
            return None
        if not in_range(field, value):
            self.warn(self.line, f"{key}={value!r} is outside {describe(field)}: left out")
            return None
        return float(value)

    def count(self, values: Mapping[str, Any], key: str) -> int | None:
        number = self.number(values, key, "tokens")
        return None if number is None else int(number)

    def text(self, values: Mapping[str, Any], key: str) -> str | None:
        value = values.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            self.warn(self.line, f"{key}: {_shown(value)} is not text: left out")
            return None
        return printable(value)

    def thermal(self, values: Mapping[str, Any], key: str) -> int | None:
        name = self.text(values, key)
        if name is None:
            return None
        if name.lower() not in THERMAL_NAMES:
            self.warn(self.line, f"{key}: {name[:40]!r} is not a thermal state: left out")
            return None
        return THERMAL_NAMES.index(name.lower())

    def rates(self, values: Mapping[str, Any], key: str) -> np.ndarray | None:
        """The rolling window: NaN where a sample is not a rate (warned once, counted)."""
        import numpy as np

        window = values.get(key)
        if window is None:
            return None
        if not isinstance(window, list):
            self.warn(self.line, f"{key}: {_shown(window)} is not a list: left out")
            return None
        try:
            rates = np.array(window, dtype=float)
        except (TypeError, ValueError):  # a sample that is not a number: read one by one
            rates = np.array([_rate(v) for v in window], dtype=float)
        if rates.ndim != 1:
            self.warn(self.line, f"{key}: not a list of numbers: left out")
            return None
        bad = ~np.isfinite(rates) | (rates < 0) | (rates > 1e9)
        if bad.any():
            what = "not a rate (NaN, infinite, negative or over 1e9)"
            self.warn(
                self.line, f"{key}: {int(bad.sum())} of {len(rates)} samples {what}: left out"
            )
            rates[bad] = np.nan
        return rates


@dataclass(frozen=True, slots=True)
class _Run:
    """One result line, its values read and checked."""

    arm: str
    task: str | None
    record: Mapping[str, Any]
    metrics: Mapping[str, Any]
    model: Mapping[str, Any]
    fields: _Field

    @classmethod
    def of(cls, record: Mapping[str, Any], fields: _Field) -> _Run | None:
        metrics = record.get("metrics")
        if not isinstance(metrics, dict):
            found = "missing" if metrics is None else _shown(metrics)
            fields.warn(fields.line, f"metrics is {found}, not an object: the line is skipped")
            return None
        model = record.get("model")
        model = model if isinstance(model, dict) else {}
        runtime = fields.text(record, "runtime") or "unknown-runtime"
        name = fields.text(model, "id") or fields.text(model, "displayName") or "unknown-model"
        task = fields.text(record, "task")
        return cls(f"{runtime}/{name.rsplit('/', 1)[-1]}", task, record, metrics, model, fields)

    def events(self, clock: _Clock, source: str, name_task: bool) -> Iterator[Event | TrialRun]:
        """START at the clock, LOAD after the load time, the samples, the report and END."""
        wall = epoch(self.record.get("timestamp"))
        wall0 = wall if wall is not None else (clock.wall if clock.wall is not None else 0.0)
        arm = f"{self.arm} ({self.task})" if name_task else self.arm
        at = _At(arm, source, clock.t, wall0)
        load_s = self.fields.number(self.metrics, "loadTimeSeconds", "load_s")
        yield self.start(at(clock.t))
        began = clock.t + (load_s or 0.0)
        yield LoadEvent(load_s=load_s, cold=self._cold(), footprint_gb=self._footprint(),
                        **at(began))  # fmt: skip
        trials = self.trials(at, began)
        total = self.fields.number(self.metrics, "totalGenerationTimeSeconds", "app_t")
        end = max(began + (total or 0.0), float(trials.t[-1]) if len(trials) else began)
        if len(trials):
            yield trials
        yield self.report(at(end))
        yield self.end(at(end), len(trials))
        clock.t, clock.wall = end, at(end)["wall"]

    def start(self, at: dict[str, Any]) -> StartEvent:
        f = self.fields
        return StartEvent(
            model=f.text(self.model, "id"), compute=self.compute(),
            bits=f.text(self.model, "quantization"), os=self._os(),
            mode="sustain" if self._windowed() else None, g=self._max_tokens(),
            extra=self.extra(), **at,
        )  # fmt: skip

    def end(self, at: dict[str, Any], trials: int) -> EndEvent:
        stop = self.fields.text(self.metrics, "stopReason")
        reason = "done" if stop in DONE_STOPS else "aborted" if stop == "cancelled" else stop
        extra = {"stop_reason": stop} if stop else {}
        return EndEvent(reason=reason, trials=trials, extra=extra, **at)

    def trials(self, at: _At, began: float) -> TrialRun:
        """The window's samples as timed decode trials; a run without a window (short-chat)
        is one trial at its end, its decode rate and tokens the run's own."""
        import numpy as np

        from anemon.parsing.columnar import TrialRun

        f, m = self.fields, self.metrics
        ttft = (f.number(m, "firstTokenLatencyMS", "app_t") or 0.0) / 1000
        window = f.rates(m, "decodeRateRollingWindow")
        prompt_tps = f.number(m, "promptTokensPerSecond", "prompt_tps") or math.nan
        if window is not None and len(window):
            # a 0: no tokens in that window; NaN: not a rate (warned): neither is a sample
            k = np.flatnonzero((window != 0) & ~np.isnan(window))
            app_t = ttft + WINDOW_S + k.astype(float)
            columns = {"trial": k.astype(float), "decode_tps": window[k]}
            first = np.full(len(k), np.nan)
            first[:1] = prompt_tps  # the run's prefill rate, on its first sample
            columns["prompt_tps"] = first
        else:
            total = f.number(m, "totalGenerationTimeSeconds", "app_t")
            decode = f.number(m, "decodeTokensPerSecond", "decode_tps")
            if total is None and decode is None:
                return TrialRun(at.arm, np.zeros(0), {})
            app_t = np.array([total if total is not None else ttft])
            gen = f.count(m, "generatedTokenCount")
            prompt = f.count(m, "promptTokenCount")
            columns = {"trial": np.zeros(1), "decode_tps": _one(decode),
                       "prompt_tps": np.array([prompt_tps]), "gen": _one(gen),
                       "prompt_tokens": _one(prompt)}  # fmt: skip
        t = began + app_t
        columns |= {"app_t": app_t, "warmup": np.zeros(len(t)), "wall": at.wall0 + t - at.base}
        return TrialRun(at.arm, t, columns)

    def report(self, at: dict[str, Any]) -> ReportEvent:
        f, m = self.fields, self.metrics
        drop = f.number(m, "batteryDeltaPercent", "battery_drop")
        energy_j = f.number(m, "energyJoules", "energy_j")
        return ReportEvent(
            tool="yardstick",
            tokens=f.count(m, "generatedTokenCount") if self._windowed() else None,
            thermal_start=f.thermal(m, "initialThermalState"),
            thermal_peak=f.thermal(m, "peakThermalState"),
            thermal_end=f.thermal(m, "finalThermalState"),
            energy_j=energy_j, j_per_token=f.number(m, "energyJoulesPerToken", "j_per_token"),
            power_w=f.number(m, "averagePackagePowerW", "power_w"), battery_drop=drop,
            energy_note=energy_note(f.text(m, "energySource"), drop) if energy_j else "",
            **at,
        )  # fmt: skip

    def compute(self) -> str | None:
        named = f"{self.model.get('id', '')} {self.model.get('displayName', '')}".lower()
        match = _NAMED_COMPUTE.search(named)
        return match[1] if match else COMPUTE.get(str(self.record.get("runtime")))

    def extra(self) -> dict[str, str]:
        """Every key that becomes no field, as text: `metrics.interTokenLatencyP50MS`,
        `device.modelIdentifier`, `id`, ..."""
        kept = {key: value for key, value in self.record.items() if key not in _USED["top"]} | {
            f"metrics.{k}": v for k, v in self.metrics.items() if k not in _USED["metrics"]
        }
        flat: dict[str, str] = {}
        for key, value in kept.items():
            if isinstance(value, dict):
                flat |= {f"{key}.{k}": kept_text(v) for k, v in value.items()}
            else:
                flat[key] = kept_text(value)
        flat |= {f"model.{k}": kept_text(v) for k, v in self.model.items() if k != "id"}
        return {kept_text(key): value for key, value in flat.items()}

    def _cold(self) -> bool | None:
        cold = self.metrics.get("coldRun")
        return cold if isinstance(cold, bool) else None

    def _windowed(self) -> bool:
        window = self.metrics.get("decodeRateRollingWindow")
        return isinstance(window, list) and len(window) > 0

    def _os(self) -> str | None:
        device = self.record.get("device")
        return self.fields.text(device, "systemVersion") if isinstance(device, dict) else None

    def _max_tokens(self) -> int | None:
        parameters = self.record.get("parameters")
        if not isinstance(parameters, dict):
            return None
        number = self.fields.number(parameters, "maxTokens", "g")
        return None if number is None else int(number)

    def _footprint(self) -> float | None:
        """memoryAfterLoadMB (MiB: bytes / 1024 / 1024) as anemon's GB (10^9 bytes)."""
        mib = self.fields.number(self.metrics, "memoryAfterLoadMB", "footprint_gb")
        return None if mib is None else round(mib * (1 << 20) / 1e9, 3)


def energy_note(source: str | None, drop: float | None) -> str:
    """Where a run's energy came from, in words: Yardstick's `battery-1pct` is the battery
    gauge read in 1 % steps at the start and end, so its drop is off by up to one step each
    way (±100/drop %), and the joules are that drop times a pack capacity from a table."""
    if source == "battery-1pct":
        spread = f" (±{100 / drop:.0f} %)" if drop is not None and drop >= 1 else ""
        return f"from the 1 % battery gauge{spread}"
    return f"as Yardstick reported it ({source or 'source not said'})"


def _rate(value: object) -> float:
    return float(value) if isinstance(value, int | float) else math.nan


def _one(value: float | None) -> np.ndarray:
    import numpy as np

    return np.array([math.nan if value is None else value], dtype=float)


def _shown(value: object) -> str:
    """A value as a warning shows it: its JSON type, never the whole of it."""
    kind = {dict: "an object", list: "a list", str: "text", bool: "a boolean"}
    return kind.get(type(value), type(value).__name__)


FORMAT = ForeignFormat(
    kind="yardstick",
    looked_for="a Yardstick result JSONL (a JSON object per line with `metrics`)",
    sniff=sniff,
    read=read,
    max_line=MAX_LINE,
)
