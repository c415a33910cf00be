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
