"""Fixed data for the dashboard tests: a two-arm sustained session from a fixed formula."""

from __future__ import annotations

import math
from pathlib import Path

from anemon.events import (
    CooldownEvent,
    EndEvent,
    ErrorEvent,
    Event,
    IdleEvent,
    LoadEvent,
    MarkerEvent,
    PhaseEvent,
    StartEvent,
    TelemetryEvent,
    TextEvent,
    TrialEvent,
)
from anemon.feeds.replay import ReplayFeed

ARMS = (("minicpm5_1b_ane_pal8", 75.8, 3900.0, 0), ("minicpm5_1b_gpu_int8", 62.8, 1082.0, 2))
"""name, first decode tok/s, first prefill tok/s, thermal at start."""
BURST_W = (4.5, 6.2)
"""Each arm's power at its first decode rate (docs/domain.md "Energy"); idle is IDLE_W."""
IDLE_W = 1.0
POWER_EVERY_S = 1.5
"""Host power readings while an arm runs (every 10 s while cooling)."""
WALL0 = 1_789_000_000.0
MARKUP_LINE = "[bold]not bold[/bold] [link=https://example.com]x[/link] \x1b[31mred?\x1b[0m"
"""A log line that must be shown literally."""


class Builder:
    def __init__(self) -> None:
        self.t = 0.0
        self.events: list[Event] = []

    def add(self, cls: type[Event], **fields: object) -> None:
        fields.setdefault("source", "bench.log")
        self.events.append(cls(t=round(self.t, 3), wall=WALL0 + self.t, **fields))

    def power(self, watts: float, plugged: bool, arm: str | None) -> None:
        """A host reading: charging while plugged (the sample's battery is never full)."""
        self.add(TelemetryEvent, arm=arm, power_w=round(watts, 3), charging=plugged,
                 plugged=plugged, source="pymobiledevice3:power")  # fmt: skip


PROCESS = ((1.62, 110.0, 6.0), (1.31, 45.0, 88.0))
"""Each arm's app (v3): footprint GB at load, CPU % of a core, GPU % (an ANE arm and a GPU
arm, as docs/domain.md has them)."""


def sustained(
    trials: int = 30, step_s: float = 4.5, power: bool = True, process: bool = False
) -> list[Event]:
    """Cooldown, start, load, warm-up, `trials` timed trials per arm; an error and a marker.

    With `power`, host power readings (charging through the first arm, on battery from the
    second arm's cooldown on), coloured by arm in the power chart. With `process`, the app's
    readings (DVT) at each trial: its footprint growing, its CPU, the GPU's utilization.
    """
    b = Builder()
    for k, (arm, decode0, prefill0, thermal0) in enumerate(ARMS):
        plugged = k == 0
        state = "charging" if plugged else "unplugged"
        b.add(PhaseEvent, phase="cooling", source="controller")
        for s in range(0, 190, 30):
            b.add(
                CooldownEvent,
                elapsed_s=s,
                min_s=180,
                cap_s=600,
                until="fair",
                thermal=thermal0 if s < 150 else 1,
                basis="app",
                source="controller",
            )
            b.add(
                IdleEvent,
                thermal=thermal0 if s < 150 else 1,
                battery=95.0,
                battery_state=state,
                line=f"IDLE thermal={thermal0} battery=95",
            )
            for _ in range(3):
                if power:
                    b.power(IDLE_W + 0.05 * (s % 60) / 30, plugged, arm)
                b.t += 10
        b.add(
            CooldownEvent,
            elapsed_s=180,
            min_s=180,
            cap_s=600,
            until="fair",
            thermal=1,
            basis="app",
            done=True,
            reason="cool",
            source="controller",
        )
        b.add(PhaseEvent, phase="launching", source="controller")
        b.add(
            StartEvent,
            arm=arm,
            tag="sustain-v2",
            mode="sustain",
            p=128,
            g=256,
            free_gb=38.2 - k,
            line=f"START arm={arm} tag=sustain-v2 mode=sustain p=128 g=256",
        )
        b.t += 1
        b.add(LoadEvent, arm=arm, load_s=0.31, cold=False, line=f"LOAD arm={arm} load_s=0.31")
        b.add(PhaseEvent, phase="running", source="controller")
        for i in range(trials + 1):
            heat = 1 - math.exp(-i / 8)
            thermal = max(thermal0, 2 if heat > 0.5 else 1)
            decode = round(decode0 * (1 - 0.3 * heat) + (i % 3) * 0.4, 1)
            readings = max(1, round(step_s / POWER_EVERY_S))
            for _ in range(readings):
                if power:
                    b.power(IDLE_W + (BURST_W[k] - IDLE_W) * decode / decode0, plugged, arm)
                b.t += step_s / readings
            if process:
                mem, cpu, gpu = PROCESS[k]
                b.add(TelemetryEvent, arm=arm, source="pymobiledevice3:dvt", pid=400 + k,
                      mem_gb=round(mem + 0.2 * heat, 3), cpu_pct=None if i == 0 else cpu - i,
                      gpu_pct=gpu - (i % 4))  # fmt: skip
            prefill = round(prefill0 * (1 - 0.35 * heat), 1)
            battery = 95.0 - (i // 12)
            b.add(
                TrialEvent,
                arm=arm,
                trial=i,
                warmup=i == 0,
                prompt_tokens=128,
                prompt_tps=prefill,
                decode_tps=decode,
                gen=256,
                battery=battery,
                battery_state=state,
                thermal=thermal,
                free_gb=38.2 - k,
                app_t=i * step_s,
                line=f"TRIAL arm={arm} trial={i} warmup={int(i == 0)} decode_tps={decode} "
                f"prompt_tps={prefill} thermal={thermal}",
            )
            if k == 1 and i == trials // 2:
                b.add(
                    ErrorEvent,
                    arm=arm,
                    message="Metal GPU Timeout",
                    line=f"[bench] arm={arm} ERROR: Metal GPU Timeout",
                )
                b.add(TextEvent, arm=arm, line=MARKUP_LINE)
                b.add(MarkerEvent, note="fan switched on", source="operator")
        b.add(EndEvent, arm=arm, reason="done", trials=trials, line=f"END arm={arm} reason=done")
    b.add(PhaseEvent, phase="done", source="controller")
    return b.events


def replay_feed(
    events: list[Event] | None = None,
    at_end: bool = True,
    tag: str | None = None,
    markers_dir: Path | None = None,
) -> ReplayFeed:
    """A replay whose clock never moves (fixed clock): only keys change what it shows; its
    markers go to `markers_dir` (give one in a test that adds markers)."""
    events = events if events is not None else sustained()
    feed = ReplayFeed(
        events, "sample.jsonl (simulated)", tag, markers_dir=markers_dir, monotonic=lambda: 0.0
    )
    if at_end:
        feed.replay.seek(feed.replay.duration)
    return feed
