"""The bench app as the kernel sees it: its physical footprint, its CPU and the GPU it keeps
busy, and the jetsam that ends it past the phone's per-process memory limit.

What DVT's sysmontap and graphics report of the app: physFootprint in bytes (what jetsam
counts; GB = 10^9 bytes), cpuUsage as % of one core (as top shows it; a busy app can pass
100), `Device Utilization %` of the GPU.

- Footprint: the app alone (`APP_GB`) until its model loads; loading maps the model, so the
  footprint climbs linearly to the arm's `resident_gb` (profiles.py, 1.3-2.9 GB: the
  notebook's measured footprints where it has them; the LOAD line's `footprint_gb` is the
  app's own estimate, not this) over the load; generating, the KV cache and working buffers
  add up to `GROWTH` more, approached with time constant `GROWTH_TAU_S`. A `jetsam` fault
  (`fault_at_s` into the timed trials) starts a leak of `LEAK_GB_PER_S`. Past the phone's
  limit (`SimConfig.memory_limit_gb`) the kernel kills the app (phone.py looks on its 1 s
  grid): a JetsamEvent report, and its log just stops.
- CPU: the share of one core each phase keeps busy, by path.
- GPU: high while a GPU arm generates (throttled too: a slower clock, as busy), low for an ANE
  arm (the UI and a little Metal).
Every figure here is an estimate but the footprints the notebook measured.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from anemon.simulator.profiles import ArmProfile

GB = 1_000_000_000
APP_PROCESS = "BenchApp"
"""The app's process name (the virtual iPhone's console process by default)."""
APP_GB = 0.08
"""The app before any model is mapped (est.)."""
GROWTH = 0.05
"""How much the footprint grows while generating, as a share of the loaded model (est.)."""
GROWTH_TAU_S = 60.0
LEAK_GB_PER_S = 0.2
"""A `jetsam` fault's leak (est.): from the arm's footprint to the limit in a few seconds."""

# (ANE, GPU) per phase, % of one core and GPU %; est.
CPU_PCT = {"starting": (20.0, 20.0), "loading": (100.0, 85.0), "trial": (38.0, 62.0),
           "hung": (2.0, 3.0), "idle": (1.0, 1.0)}  # fmt: skip
GPU_PCT = {"loading": (2.0, 25.0), "trial": (6.0, 93.0), "hung": (0.0, 99.0)}


@dataclass(frozen=True, slots=True)
class Usage:
    """One process's readings now."""

    pid: int
    name: str
    footprint_bytes: int
    cpu_pct: float
    gpu_pct: float


@dataclass(frozen=True, slots=True)
class SystemProcess:
    """A process of the phone's own, always there (sysmontap lists it beside the app)."""

    pid: int
    name: str
    footprint_gb: float
    cpu_pct: float


SYSTEM = (
    SystemProcess(1, "launchd", 0.012, 0.1),
    SystemProcess(61, "SpringBoard", 0.21, 2.5),
    SystemProcess(66, "backboardd", 0.09, 1.8),
    SystemProcess(112, "osanalyticshelper", 0.006, 0.0),
)


@dataclass
class Memory:
    """The app's footprint over its life (benchapp.py sets the times as its phases begin)."""

    profile: ArmProfile | None
    load_from: float | None = None
    load_s: float = 0.0
    generating_from: float | None = None
    leak_from: float | None = None

    def footprint_gb(self, now: float) -> float:
        p = self.profile
        if p is None or self.load_from is None:
            return APP_GB
        model = p.resident_gb - APP_GB
        loaded = 1.0 if self.load_s <= 0 else min(1.0, (now - self.load_from) / self.load_s)
        gb = APP_GB + model * max(0.0, loaded)
        if self.generating_from is not None:
            held = now - self.generating_from
            gb += p.resident_gb * GROWTH * (1.0 - math.exp(-max(0.0, held) / GROWTH_TAU_S))
        if self.leak_from is not None:
            gb += LEAK_GB_PER_S * max(0.0, now - self.leak_from)
        return gb


def cpu_pct(phase: str, profile: ArmProfile | None) -> float:
    """% of one core the app keeps busy in `phase`."""
    return _by_path(CPU_PCT, phase, profile)


def gpu_pct(phase: str, profile: ArmProfile | None) -> float:
    """The GPU's utilisation the app causes in `phase`."""
    return _by_path(GPU_PCT, phase, profile)


def _by_path(
    table: dict[str, tuple[float, float]], phase: str, profile: ArmProfile | None
) -> float:
    ane, gpu = table.get(phase, (0.0, 0.0))
    return gpu if profile is not None and profile.compute == "gpu" else ane
