"""The fake bench app a fake `devicectl device process launch` starts, detached.

Usage: bench_app.py CONTAINER_DIR RUNNING_DIR ENV_JSON TRIAL_S

Appends line-protocol records (docs/spec/line-protocol.md) to `AB_LOG` (default
`Documents/sustain/<AB_TAG>.log`) in its container, one `trial_s` of real time per trial, as
the AB_* environment asks; then exits, removing its `RUNNING_DIR/<pid>.json` marker.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

SECONDS_PER_TRIAL = 4.5  # the `t` a trial advances, in the app's own (virtual) seconds
LIFETIME_S = 60.0  # never outlive a test run, even if nobody terminates us


def main(container: Path, running: Path, env: dict[str, str], trial_s: float) -> None:
    marker = running / f"{os.getpid()}.json"
    signal.signal(signal.SIGTERM, lambda *_: _exit(marker))
    _await_marker(marker)
    tag = env.get("AB_TAG", "bench")
    log = container / env.get("AB_LOG", f"Documents/sustain/{tag}.log")
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "a", encoding="utf-8") as out:
        for line in _records(env, trial_s):
            out.write(line + "\n")
            out.flush()
    _exit(marker)


def _records(env: dict[str, str], trial_s: float):
    arm = env.get("AB_MODEL", "unknown")
    mode = env.get("AB_MODE", "ab")
    if mode == "idle":
        yield from _idle(arm, float(env.get("AB_INTERVAL", trial_s)), trial_s)
        return
    if mode == "sustain":
        trials = max(1, int(float(env.get("AB_SECONDS", "600")) / SECONDS_PER_TRIAL))
    else:
        trials = int(env.get("AB_TRIALS", "5"))
    p, g = env.get("AB_PROMPT", "128"), env.get("AB_GEN", "256")
    yield (
        f"START arm={arm} model=Fake compute=ane bits=8 os=22C152 free_gb=38.2 mode={mode} "
        f"p={p} g={g} n={trials}"
    )
    yield f"LOAD arm={arm} load_s=0.31 cold=0 footprint_gb=1.6"
    for trial in range(trials + 1):
        time.sleep(trial_s)
        decode = 75.0 - 0.1 * trial
        t = SECONDS_PER_TRIAL * (trial + 1)
        yield (
            f"TRIAL arm={arm} trial={trial} warmup={int(trial == 0)} t={t:.1f} prompt_tokens={p} "
            f"prompt_tps=3650.0 decode_tps={decode:.1f} gen={g} battery=95 "
            "battery_state=charging thermal=fair"
        )
    yield f"END arm={arm} reason=done trials={trials}"


def _idle(arm: str, interval_s: float, trial_s: float):
    start = time.monotonic()
    while time.monotonic() - start < LIFETIME_S:
        yield f"IDLE arm={arm} thermal=fair battery=95 battery_state=charging free_gb=38.2"
        time.sleep(min(interval_s, trial_s))


def _await_marker(marker: Path) -> None:
    """The launcher writes our marker just after starting us: let it, so that removing it
    at exit cannot come first and leave a stale one."""
    deadline = time.monotonic() + 5.0
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.005)


def _exit(marker: Path) -> None:
    marker.unlink(missing_ok=True)
    os._exit(0)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), json.loads(sys.argv[3]), float(sys.argv[4]))
