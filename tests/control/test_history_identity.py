"""The run's own recording is not its history, under any name (issue 21, part 2: files are
compared by device and inode, not by name)."""

from __future__ import annotations

import os

from anemon.control.preflight import find_history
from tests.control.helpers import TWO_ARMS, plan, run_plan

SHORT = '[protocol]\nseconds = 60\n[cooldown]\nmin_s = 30\nuntil = "none"\ncap_s = 60\n'


def test_the_runs_own_recording_under_another_name_is_not_its_history(tmp_path):
    own = tmp_path / "t-1.jsonl"
    run_plan(plan(TWO_ARMS, s=SHORT), record=own)
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    os.link(own, elsewhere / "t-1-link.jsonl")
    assert find_history("t", [elsewhere]).path is not None  # a recording of the tag, read
    assert find_history("t", [elsewhere], exclude=own).path is None
