"""A fake `xcrun devicectl`, and a handle to configure and inspect it (the `fake_xcrun`
fixture of tests/devices/conftest.py puts it first on PATH)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from .devicectl import DEFAULTS, JSON_VERSION_ENV, STATE_ENV

SCRIPT = Path(__file__).with_name("devicectl.py")


class FakeXcrun:
    """Owns a state directory and a `bin/xcrun` wrapper that runs the fake with this Python."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.bin = root / "bin"
        self.state = root / "state"
        self.bin.mkdir(parents=True)
        self.state.mkdir()
        (self.state / "running").mkdir()
        self.xcrun = self.bin / "xcrun"
        self.xcrun.write_text(
            f"#!{sys.executable}\n"
            "import runpy, sys\n"
            f"runpy.run_path({str(SCRIPT)!r}, run_name='__main__')\n"
        )
        self.xcrun.chmod(0o755)
        self.configure()

    def environ(self, json_version: int | None = None) -> dict[str, str]:
        """The variables to set: PATH with the fake first, and the state directory."""
        env = {
            "PATH": f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}",
            STATE_ENV: str(self.state),
        }
        if json_version is not None:
            env[JSON_VERSION_ENV] = str(json_version)
        return env

    def configure(self, **changes: Any) -> None:
        path = self.state / "config.json"
        config = json.loads(path.read_text()) if path.exists() else dict(DEFAULTS)
        config.update(changes)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(config))
        os.replace(tmp, path)

    def config(self) -> dict[str, Any]:
        return json.loads((self.state / "config.json").read_text())

    def calls(self) -> list[list[str]]:
        """Every argv after `xcrun devicectl`, in order."""
        path = self.state / "calls.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines()]

    def calls_of(self, *words: str) -> list[list[str]]:
        return [call for call in self.calls() if tuple(call[: len(words)]) == words]

    def launched(self) -> list[int]:
        """Pids of the apps started, in order."""
        path = self.state / "launched.jsonl"
        if not path.exists():
            return []
        return [json.loads(line)["pid"] for line in path.read_text().splitlines()]

    def container_file(self, bundle: str, path: str) -> Path:
        return self.state / "containers" / bundle / path

    def running(self) -> set[int]:
        """Pids of the fake apps still running."""
        return {int(marker.stem) for marker in (self.state / "running").glob("*.json")}

    def kill_all(self) -> None:
        """Stop every fake app left behind (a test that failed midway)."""
        for pid in self.running():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
