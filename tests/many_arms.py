"""A bench log of many one-trial arms (issue 21): one START/LOAD/TRIAL/END group per arm, as
docs/spec/line-protocol.md writes them (about 275 bytes an arm)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from anemon.recording.reader import open_source
from anemon.store import Session


def arm_name(index: int) -> str:
    return f"arm{index:06d}"


def many_arms_lines(arms: int) -> Iterator[str]:
    """The log's lines, each ending in a newline; arm i's trial at t=1, its decode 10 + i % 50."""
    for index in range(arms):
        arm = arm_name(index)
        yield f"START arm={arm} model=M compute=ane bits=8 mode=sustain p=128 g=256\n"
        yield f"LOAD arm={arm} load_s=0.3 cold=0\n"
        yield (
            f"TRIAL arm={arm} trial=0 warmup=0 t=1.0 prompt_tokens=128 prompt_tps=3000.0 "
            f"decode_tps={10 + index % 50}.0 gen=256 battery=90 thermal=fair\n"
        )
        yield f"END arm={arm} reason=done trials=1\n"


def write_many_arms(path: Path, arms: int) -> Path:
    """`path` holding `arms` one-trial arms (written whole, then returned)."""
    with path.open("w") as out:
        out.writelines(many_arms_lines(arms))
    return path


def many_arms_session(arms: int, path: Path) -> Session:
    """The Session of such a log (written to `path`), read as the dashboard reads it."""
    return Session.from_events(open_source(write_many_arms(path, arms)))
