"""The boxes below the UI never import Textual, and pymobiledevice3 is imported only when used."""

from __future__ import annotations

import subprocess
import sys

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
