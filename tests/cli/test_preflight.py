"""`anemon preflight PLAN` (issue 12 part 2): the table (a snapshot), its exit statuses."""

from __future__ import annotations

import io

from rich.console import Console

from anemon.cli import main
from anemon.events import Check
from anemon.headless import preflight_table

CHECKS = [
    Check("device", "pass", "Simulated iPhone, iPhone (sim), OS 24A437"),
    Check("free disk", "fail", "3.0 GB free (guards.min_free_gb = 5)",
          "below guards.min_free_gb: no arm would start"),
    Check("thermal", "warn", "serious (battery 38.0 °C)", "the first arm would start warm"),
    Check("low power", "pass", "off\x1b[31m"),
]  # fmt: skip
EXPECTED = r"""
pre-flight: t on sim
┏━━━━━━━━━━━┳━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓
┃ check     ┃ result ┃ reading                              ┃ note                                 ┃
┡━━━━━━━━━━━╇━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┩
│ device    │ pass   │ Simulated iPhone, iPhone (sim), OS   │                                      │
│           │        │ 24A437                               │                                      │
│ free disk │ fail   │ 3.0 GB free (guards.min_free_gb = 5) │ below guards.min_free_gb: no arm     │
│           │        │                                      │ would start                          │
│ thermal   │ warn   │ serious (battery 38.0 °C)            │ the first arm would start warm       │
│ low power │ pass   │ off\x1b[31m                          │                                      │
└───────────┴────────┴──────────────────────────────────────┴──────────────────────────────────────┘
"""
"""The table as a 100-column terminal shows it (the ESC of a reading escaped, never sent)."""
PLAN = 'tag = "pf"\n[[arms]]\nname = "minicpm5_1b_ane_pal8"\n'


def test_the_preflight_table_snapshot():
    console = Console(record=True, width=100, color_system=None, file=io.StringIO())
    console.print(preflight_table(CHECKS, title="pre-flight: t on sim"))
    shown = "\n".join(line.rstrip() for line in console.export_text().splitlines())
    assert "\n" + shown + "\n" == EXPECTED


def test_preflight_passes_with_0_and_prints_every_check(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.toml").write_text(PLAN)
    assert main(["preflight", "p.toml"]) == 0
    out = capsys.readouterr().out
    checked = ("device", "app", "free disk", "thermal", "battery", "system load", "low power",
               "os build")  # fmt: skip
    for check in checked:
        assert check in out
    assert "pre-flight: 8 pass" in out
    assert not (tmp_path / "anemon-recordings").exists()  # nothing recorded


def test_preflight_warns_with_0_and_fails_with_1(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "warm.toml").write_text(PLAN + '[sim]\nstart_thermal = "serious"\n')
    assert main(["preflight", "warm.toml"]) == 0
    assert "1 warn" in capsys.readouterr().out
    (tmp_path / "full.toml").write_text(PLAN + "[sim]\nfree_gb = 1.0\n")
    assert main(["preflight", "full.toml", "--device", "sim"]) == 1
    assert "free disk: below guards.min_free_gb" in capsys.readouterr().out


def test_a_bad_plan_exits_2(tmp_path, capsys):
    (tmp_path / "bad.toml").write_text(PLAN + "[alerts]\nbattery_floor_pct = 200\n")
    assert main(["preflight", str(tmp_path / "bad.toml")]) == 2
    assert "bad.toml:5: alerts.battery_floor_pct: 200 is out of range" in capsys.readouterr().err


def test_a_simulated_phone_unplugged_over_usb_cannot_be_reached_and_fails_with_1(
    tmp_path, capsys, monkeypatch
):
    """`sim.plugged = false` over USB: the cable, the host's only link, is out. It used to pass
    with warnings (exit 0), then each arm failed "cannot launch"; over the network it is reached."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "off.toml").write_text(PLAN + "[sim]\nplugged = false\n")
    assert main(["preflight", "off.toml"]) == 1
    out = capsys.readouterr().out
    assert "device: the host cannot reach the phone: sim.plugged = false" in out
    (tmp_path / "wifi.toml").write_text(
        PLAN + '[device]\nconnect = "network"\n[sim]\nplugged = false\n'
    )
    assert main(["preflight", "wifi.toml"]) == 0
