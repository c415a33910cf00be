"""A tiny reader of the bench log for these tests (the real parser lives elsewhere)."""

from __future__ import annotations

import re
import statistics
from collections.abc import Mapping
from dataclasses import dataclass

from anemon.simulator import SimulatedIPhone

BUNDLE = "com.example.bench"
KINDS = ("START", "LOAD", "TRIAL", "IDLE", "END")
_PAIR = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)')


@dataclass(frozen=True)
class Record:
    kind: str
    """One of KINDS, "ERROR" or "TEXT"."""
    fields: dict[str, str]
    message: str = ""

    def __getitem__(self, key: str) -> str:
        return self.fields[key]


def parse_line(line: str) -> Record:
    if "ERROR:" in line:
        head, _, message = line.partition("ERROR:")
        return Record("ERROR", dict(_PAIR.findall(head)), message.strip())
    kind = line.split(" ", 1)[0]
    if kind not in KINDS:
        return Record("TEXT", {}, line)
    return Record(kind, dict(_PAIR.findall(line)))


def parse(data: bytes) -> list[Record]:
    assert data.endswith(b"\n") or not data
    return [parse_line(line) for line in data.decode().splitlines()]


def log(sim: SimulatedIPhone, tag: str = "t") -> list[Record]:
    return parse(sim.container_files(BUNDLE)[f"Documents/sustain/{tag}.log"])


def kinds(records: list[Record]) -> list[str]:
    return [r.kind for r in records]


def env(model: str, mode: str = "sustain", tag: str = "t", **extra: str) -> dict[str, str]:
    return {"AB_MODEL": model, "AB_TAG": tag, "AB_MODE": mode, **extra}


def run(sim: SimulatedIPhone, environment: Mapping[str, str]) -> int:
    """Launch and jump from change to change until the app exits (or stops changing)."""
    pid = sim.launch(BUNDLE, environment)
    while pid in sim.running() and (d := sim.next_change_in()) is not None:
        sim.advance(d)
    return pid


@dataclass(frozen=True)
class Summary:
    trials: int
    tokens: int
    decode_mean: float
    decode_first3: float
    decode_last3: float
    decode_min: float
    decode_max: float
    prefill_mean: float
    prefill_first3: float
    prefill_last3: float
    thermals: list[str]
    serious_at_s: float | None


def summarize(records: list[Record], arm: str) -> Summary:
    timed = [r for r in records if r.kind == "TRIAL" and r["arm"] == arm and r["warmup"] == "0"]
    decode = [float(r["decode_tps"]) for r in timed]
    prefill = [float(r["prompt_tps"]) for r in timed]
    thermals = [r["thermal"] for r in timed]
    hot = [float(r["t"]) for r in timed if r["thermal"] in ("serious", "critical")]
    mean = statistics.mean
    return Summary(
        trials=len(timed),
        tokens=sum(int(r["gen"]) for r in timed),
        decode_mean=mean(decode),
        decode_first3=mean(decode[:3]),
        decode_last3=mean(decode[-3:]),
        decode_min=min(decode),
        decode_max=max(decode),
        prefill_mean=mean(prefill),
        prefill_first3=mean(prefill[:3]),
        prefill_last3=mean(prefill[-3:]),
        thermals=thermals,
        serious_at_s=hot[0] if hot else None,
    )
