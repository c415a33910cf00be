"""`--help` says what a user needs, in their words: no developer notes, no internal names."""

from __future__ import annotations

import pytest

from anemon.cli import COMMANDS, main

INTERNAL = ("`", ".py", ".md", "docs/", "anemon.", "add_parser", "os_trace", "usbmuxd",
            "lockdown", "textual", "TODO")  # fmt: skip
"""What only a developer would write: code marks, files, modules, libraries, protocols."""


@pytest.mark.parametrize("command", [(), *((name,) for name in COMMANDS)],
                         ids=["anemon", *COMMANDS])  # fmt: skip
def test_help_has_users_text_only(command, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # one option a line: a word is never cut
    with pytest.raises(SystemExit) as ended:
        main([*command, "--help"])
    assert ended.value.code == 0
    shown = capsys.readouterr().out
    assert shown.startswith(f"usage: anemon {' '.join(command)}".rstrip())
    found = [word for word in INTERNAL if word in shown]
    assert not found, shown
