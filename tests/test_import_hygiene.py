"""The boxes below the UI never import Textual, and pymobiledevice3 is imported only when used."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

CORE = (
    "anemon.cli.summary", "anemon.cli.export", "anemon.cli.watch", "anemon.cli.run",
    "anemon.cli.replay", "anemon.cli.devices", "anemon.feeds", "anemon.feeds.lifecycle",
    "anemon.feeds.live", "anemon.feeds.mirror", "anemon.feeds.device", "anemon.feeds.plan",
    "anemon.feeds.replay", "anemon.headless", "anemon.pipeline", "anemon.parsing",
    "anemon.store", "anemon.recording.reader", "anemon.recording.writer",
    "anemon.analysis.summary", "anemon.analysis.export", "anemon.sources.mirror",
    "anemon.sources.replay", "anemon.control.controller", "anemon.devices.sim",
    "anemon.devices.devicectl", "anemon.devices.pmd3", "anemon.devices.virtual",
    "anemon.simulator",
)  # fmt: skip


def test_core_modules_import_neither_textual_nor_pymobiledevice3():
    code = (
        "import sys\n"
        f"for name in {CORE!r}: __import__(name)\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'textual', 'pymobiledevice3'}))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


HEAVY = ("pandas", "pyarrow", "textual", "pymobiledevice3")
"""Imported only by the commands that use them: `--help` and a summary start without them."""


def _heavy_modules_after(argv: list[str]) -> list[str]:
    """The heavy packages in sys.modules after `anemon ARGV` ran in a fresh interpreter."""
    code = (
        "import contextlib, io, sys\n"
        "from anemon.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        f"        main({argv!r})\n"
        "    except SystemExit:\n"
        "        pass\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return list(ast.literal_eval(done.stdout.strip().splitlines()[-1]))


def test_help_imports_no_heavy_package():
    assert _heavy_modules_after(["--help"]) == []


def test_summary_of_a_small_log_imports_no_heavy_package():
    log = str(Path(__file__).parent / "data" / "spec_example.log")
    assert _heavy_modules_after(["summary", log]) == []
    assert _heavy_modules_after(["summary", "--format", "json", log]) == []


NOT_FOR_A_SMALL_SUMMARY = (
    "sqlite3", "socket", "traceback", "importlib.resources", "orjson",
    "anemon.recording.writer", "anemon.recording.codec",
    "anemon.devices", "anemon.cli.export", "anemon.cli.run",
    "anemon.cli.serve", "anemon.cli.demo", "anemon.cli.sessions", "anemon.cli.watch",
)  # fmt: skip
"""Modules a summary of a small raw log does not import (the other commands' parsers and what
they import, the recorder, the recordings' codec, the backends, the traceback of --debug)."""


def test_summary_of_a_small_log_imports_only_its_own_command():
    log = str(Path(__file__).parent / "data" / "spec_example.log")
    code = (
        "import contextlib, io, sys\n"
        "from anemon.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main(['summary', {log!r}])\n"
        f"print(sorted(set(sys.modules) & set({NOT_FOR_A_SMALL_SUMMARY!r})))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_a_misspelt_command_is_still_told_every_choice(capsys):
    """Only the named command's parser is built; a word that names none builds them all."""
    from anemon.cli import COMMANDS, main

    try:
        main(["--debug", "sumary", "x"])
    except SystemExit as e:
        assert e.code == 2
    err = capsys.readouterr().err
    assert all(f"'{name}'" in err for name in COMMANDS)
