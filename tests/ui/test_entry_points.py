"""What the entry points around the dashboard say on the terminal."""

from __future__ import annotations

import argparse

import pytest

from anemon.cli import replay
from anemon.devices.virtual.__main__ import main as virtual_iphone


def test_replay_help_states_the_default_speed() -> None:
    parser = argparse.ArgumentParser()
    replay.add_parser(parser.add_subparsers())
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    speed = next(a for a in sub.choices["replay"]._actions if a.dest == "speed")
    assert speed.default == 1.0 and "(default 1)" in (speed.help or "")


def test_the_virtual_iphone_prints_its_console_process(capsys: pytest.CaptureFixture[str]) -> None:
    assert virtual_iphone(["--seconds", "0.1"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("export USBMUXD_SOCKET_ADDRESS=127.0.0.1:")
    assert err.rstrip().endswith("--console BenchApp")
