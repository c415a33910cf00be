"""The bench app's log lines, exactly as docs/spec/line-protocol.md reads them."""

from __future__ import annotations

from dataclasses import dataclass

from anemon.simulator.profiles import ArmProfile
from anemon.simulator.thermal import STATES


@dataclass(frozen=True, slots=True)
class Sensors:
    """What the app reads from the phone when it writes a line."""

    thermal: int
    """`ProcessInfo.thermalState` (0-3)."""
    die_c: float
    """Not in any line: what throttles the current trial."""
    battery: float
    battery_state: str
    free_gb: float


def value(v: object) -> str:
    """A value, bare when it can be, else double-quoted with escapes."""
    text = str(v)
    if text and not any(c.isspace() or c in '"\\' for c in text):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def record(kind: str, **fields: object) -> str:
    return " ".join([kind, *(f"{k}={value(v)}" for k, v in fields.items())])


def _phone(s: Sensors) -> dict[str, object]:
    return {
        "battery": round(s.battery),
        "battery_state": s.battery_state,
        "thermal": STATES[s.thermal],
        "free_gb": f"{s.free_gb:.1f}",
    }


def start(arm: str, p: ArmProfile, os_build: str, free_gb: float, mode: str,
          prompt: int, gen: int, n: int | None) -> str:  # fmt: skip
    fields: dict[str, object] = {"arm": arm, "model": p.model, "compute": p.compute,
                                 "bits": p.bits, "os": os_build, "free_gb": f"{free_gb:.1f}",
                                 "mode": mode, "p": prompt, "g": gen}  # fmt: skip
    if n is not None:
        fields["n"] = n
    return record("START", **fields)


def load(arm: str, load_s: float, cold: bool, footprint_gb: float) -> str:
    return record("LOAD", arm=arm, load_s=f"{load_s:.2f}", cold=int(cold),
                  footprint_gb=f"{footprint_gb:.1f}")  # fmt: skip


@dataclass(frozen=True, slots=True)
class TrialResult:
    index: int
    warmup: bool
    t: float
    """Seconds since the process started, when the trial completed."""
    prompt_tokens: int
    prompt_tps: float
    decode_tps: float
    gen: int


def trial(arm: str, r: TrialResult, s: Sensors) -> str:
    return record("TRIAL", arm=arm, trial=r.index, warmup=int(r.warmup), t=f"{r.t:.2f}",
                  prompt_tokens=r.prompt_tokens, prompt_tps=f"{r.prompt_tps:.1f}",
                  decode_tps=f"{r.decode_tps:.1f}", gen=r.gen, **_phone(s))  # fmt: skip


def idle(s: Sensors) -> str:
    phone = _phone(s)
    return record("IDLE", thermal=phone["thermal"], battery=phone["battery"],
                  battery_state=phone["battery_state"], free_gb=phone["free_gb"])  # fmt: skip


def end(arm: str | None, reason: str, trials: int) -> str:
    if arm is None:
        return record("END", reason=reason, trials=trials)
    return record("END", arm=arm, reason=reason, trials=trials)


def error(arm: str | None, message: str) -> str:
    return f"ERROR: {message}" if arm is None else f"arm={value(arm)} ERROR: {message}"
